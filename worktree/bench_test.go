package worktree

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Benchmarks print medians and ratios measured in the same run, in wall time and in CPU time
// (this process plus the git processes it waited for), because the machines are shared and
// wall time alone mostly measures the neighbours (docs/benchmarks.md, "Workspaces and
// landing"):
//
//	go test -run '^$' -bench 'WorkspaceCreate|Land' -benchtime 20x ./worktree/

func benchRepo(b *testing.B) *testRepo {
	files := map[string]string{}
	for i := range 2000 {
		files[fmt.Sprintf("pkg%02d/file%04d.txt", i%40, i)] = strings.Repeat(fmt.Sprintf("line %d of a typical source file\n", i), 40)
	}
	return newTestRepo(b, files)
}

// sample is one measurement: wall time and CPU time (user + system, self + waited children).
type sample struct{ wall, cpu time.Duration }

func cpuNow() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}

// measure runs f with the benchmark timer on.
func measure(b *testing.B, f func()) sample {
	syscall.Sync() // start each measurement with no dirty pages from the last one
	b.StartTimer()
	cpu, start := cpuNow(), time.Now()
	f()
	s := sample{wall: time.Since(start), cpu: cpuNow() - cpu}
	b.StopTimer()
	return s
}

func medians(ss []sample) (wall, cpu time.Duration) {
	w := make([]time.Duration, len(ss))
	c := make([]time.Duration, len(ss))
	for i, s := range ss {
		w[i], c[i] = s.wall, s.cpu
	}
	slices.Sort(w)
	slices.Sort(c)
	return w[len(w)/2], c[len(c)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkWorkspaceCreate: a worktree workspace on a 2,000-file repository (Prepare with the
// pool off; Prepare claiming from a warm pool) against a plain `git worktree add` of the same
// repository. Goals: Prepare ≤ 1.3×, warm pool ≤ 0.3×.
func BenchmarkWorkspaceCreate(b *testing.B) {
	tr := benchRepo(b)
	m := newTestManager(b)
	r := openRepo(b, m, tr.dir)
	mp := newTestManager(b, func(c *Config) { c.WarmPool = 1 })
	rp := openRepo(b, mp, tr.dir)
	require.NoError(b, mp.FillPool(ctxT(b), rp))
	rawDir := b.TempDir()
	var raw, cold, warm []sample
	b.StopTimer()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(rawDir, fmt.Sprintf("w%d", i))
		runs := []func(){
			func() {
				raw = append(raw, measure(b, func() {
					out, err := exec.Command("git", "-C", tr.dir, "worktree", "add", "-q", "-b", fmt.Sprintf("raw-%d", i), dir, "main").CombinedOutput()
					require.NoError(b, err, string(out))
				}))
			},
			func() {
				var ws Workspace
				cold = append(cold, measure(b, func() {
					var err error
					ws, err = m.Prepare(ctxT(b), PrepareRequest{Repo: r, MissionID: "cold", Attempt: i + 1})
					require.NoError(b, err)
				}))
				require.False(b, ws.FromPool)
			},
			func() {
				var ws Workspace
				warm = append(warm, measure(b, func() {
					var err error
					ws, err = mp.Prepare(ctxT(b), PrepareRequest{Repo: rp, MissionID: "warm", Attempt: i + 1})
					require.NoError(b, err)
				}))
				require.True(b, ws.FromPool)
				require.NoError(b, mp.FillPool(ctxT(b), rp)) // wait for the refill, untimed
			},
		}
		for k := range runs { // rotate the order so no variant always follows the same one
			runs[(i+k)%len(runs)]()
		}
		gitIn(b, tr.dir, "worktree", "remove", "--force", dir)
	}
	reportRatios(b, "git_worktree_add", raw, map[string][]sample{"prepare": cold, "prepare_warm_pool": warm})
}

// BenchmarkLand: landing a non-conflicting mission (its work committed, as an agent leaves it;
// a diverged target that is not checked out; 2,000-file repository) with Manager.Land against
// the raw sequence `git merge-tree --write-tree` + `git commit-tree` + `git update-ref <new>
// <old>`. Goal ≤ 2×. The missions' indexes are written a second after their files, as after
// any real run: right after a checkout, git's racy-index check makes `git status` hash every
// file (see docs/benchmarks.md).
func BenchmarkLand(b *testing.B) {
	tr := benchRepo(b)
	tr.git("branch", "target")
	m := newTestManager(b)
	r := openRepo(b, m, tr.dir)
	seq := 0
	mission := func(name string) Workspace {
		ws, err := m.Prepare(ctxT(b), PrepareRequest{Repo: r, MissionID: name, Attempt: 1, TargetBranch: "target"})
		require.NoError(b, err)
		seq++
		writeFile(b, ws.Path, "missions/"+name+".txt", name+"\n")
		writeFile(b, ws.Path, fmt.Sprintf("pkg03/file%04d.txt", (seq*40+3)%2000), name+"\n")
		_, _, err = m.CommitPending(ctxT(b), ws, "mission "+name)
		require.NoError(b, err)
		return ws
	}
	moveTarget := func(tag string) { personCommit(b, tr, tag) }
	b.StopTimer()
	var rawWS, landWS []Workspace
	for i := 0; i < b.N; i++ {
		rawWS = append(rawWS, mission(fmt.Sprintf("raw-%d", i)))
		landWS = append(landWS, mission(fmt.Sprintf("land-%d", i)))
	}
	time.Sleep(1100 * time.Millisecond)
	for _, ws := range landWS {
		gitIn(b, ws.Path, "update-index", "-q", "--refresh")
	}
	var raw, landed []sample
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		moveTarget(fmt.Sprintf("r%d", i))
		old := gitIn(b, tr.dir, "rev-parse", "refs/heads/target") // known beforehand: not timed
		raw = append(raw, measure(b, func() {
			tree := gitIn(b, tr.dir, "merge-tree", "--write-tree", old, rawWS[i].Branch)
			c := gitInStdin(b, tr.dir, "merge\n", "commit-tree", "-p", old, "-p", rawWS[i].Branch, "-F", "-", tree)
			gitIn(b, tr.dir, "update-ref", "refs/heads/target", c, old)
		}))
		moveTarget(fmt.Sprintf("l%d", i))
		var l Landing
		landed = append(landed, measure(b, func() {
			var err error
			l, err = m.Land(ctxT(b), LandRequest{Repo: r, MissionID: landWS[i].MissionID, Attempt: 1, Workspace: landWS[i]})
			require.NoError(b, err)
		}))
		require.Equal(b, LandLanded, l.Status)
		require.False(b, l.FastForward)
	}
	reportRatios(b, "raw_merge_tree_commit_tree_update_ref", raw, map[string][]sample{"land": landed})
}

// personCommit makes a person's commit on the branch "target" with plumbing (no checkout).
func personCommit(b *testing.B, tr *testRepo, tag string) {
	blob := gitInStdin(b, tr.dir, tag+"\n", "hash-object", "-w", "--stdin")
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(b.TempDir(), "index")}
	gitEnv(b, tr.dir, env, "read-tree", "target")
	gitEnv(b, tr.dir, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+",person-"+tag+".txt")
	c := gitIn(b, tr.dir, "commit-tree", "-p", "target", "-m", "person "+tag, gitEnv(b, tr.dir, env, "write-tree"))
	gitIn(b, tr.dir, "update-ref", "refs/heads/target", c)
}

// reportRatios reports the reference's medians and each candidate's medians and ratios.
func reportRatios(b *testing.B, refName string, ref []sample, candidates map[string][]sample) {
	rw, rc := medians(ref)
	b.ReportMetric(ms(rw), refName+"_ms")
	line := fmt.Sprintf("%d runs, medians wall (cpu): %s %.1f ms (%.1f ms)", len(ref), refName, ms(rw), ms(rc))
	names := make([]string, 0, len(candidates))
	for name := range candidates {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		w, c := medians(candidates[name])
		b.ReportMetric(ms(w), name+"_ms")
		b.ReportMetric(float64(w)/float64(rw), name+"_ratio")
		b.ReportMetric(float64(c)/float64(rc), name+"_cpu_ratio")
		line += fmt.Sprintf("; %s %.1f ms (%.1f ms) = %.2f× wall, %.2f× cpu", name, ms(w), ms(c), float64(w)/float64(rw), float64(c)/float64(rc))
	}
	b.Log(line)
}

func gitInStdin(b *testing.B, dir, stdin string, args ...string) string {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=P", "GIT_AUTHOR_EMAIL=p@x", "GIT_COMMITTER_NAME=P", "GIT_COMMITTER_EMAIL=p@x")
	out, err := cmd.Output()
	require.NoError(b, err)
	return strings.TrimSpace(string(out))
}

func gitEnv(b *testing.B, dir string, env []string, args ...string) string {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(b, err, string(out))
	return strings.TrimSpace(string(out))
}

// BenchmarkLandBatch lands 8 attempts of one target (each changing two files, the target moved
// by a person's commit before each round) one by one with Land, and together with LandBatch,
// in the same run, and reports the time per attempt of each and their ratio.
//
//	go test ./worktree -run '^$' -bench LandBatch -benchtime 10x
func BenchmarkLandBatch(b *testing.B) {
	const k = 8
	tr := benchRepo(b)
	tr.git("branch", "target")
	m := newTestManager(b)
	r := openRepo(b, m, tr.dir)
	round := func(tag string) []LandRequest {
		reqs := make([]LandRequest, k)
		for j := range reqs {
			name := fmt.Sprintf("%s-%d", tag, j)
			ws, err := m.Prepare(ctxT(b), PrepareRequest{Repo: r, MissionID: name, Attempt: 1, TargetBranch: "target"})
			require.NoError(b, err)
			writeFile(b, ws.Path, "missions/"+name+".txt", name+"\n")
			writeFile(b, ws.Path, fmt.Sprintf("pkg%02d/%s.txt", j, name), name+"\n")
			reqs[j] = LandRequest{Repo: r, MissionID: name, Attempt: 1, Workspace: ws}
		}
		personCommit(b, tr, tag)
		return reqs
	}
	var single, batch []sample
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		reqs := round(fmt.Sprintf("one%d", i))
		b.StartTimer()
		single = append(single, measure(b, func() {
			for _, req := range reqs {
				l, err := m.Land(ctxT(b), req)
				require.NoError(b, err)
				require.Equal(b, LandLanded, l.Status)
			}
		}))
		b.StopTimer()
		reqs = round(fmt.Sprintf("all%d", i))
		b.StartTimer()
		batch = append(batch, measure(b, func() {
			out, err := m.LandBatch(ctxT(b), reqs)
			require.NoError(b, err)
			for _, o := range out {
				require.NoError(b, o.Err)
				require.Equal(b, LandLanded, o.Landing.Status)
			}
		}))
		b.StopTimer()
	}
	sw, _ := medians(single)
	bw, _ := medians(batch)
	b.ReportMetric(ms(sw)/k, "one_by_one_ms/attempt")
	b.ReportMetric(ms(bw)/k, "batch_ms/attempt")
	b.ReportMetric(float64(bw)/float64(sw), "batch_ratio")
	b.Logf("%d attempts per round, %d rounds, medians: one by one %.1f ms per attempt, batch %.1f ms per attempt = %.2f×",
		k, b.N, ms(sw)/k, ms(bw)/k, float64(bw)/float64(sw))
}
