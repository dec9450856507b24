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

// Benchmarks print medians and ratios measured in the same run (docs/benchmarks.md,
// "Workspaces and landing"):
//
//	go test -run '^$' -bench 'WorkspaceCreate|Land' -benchtime 20x ./worktree/

func benchRepo(b *testing.B) *testRepo {
	files := map[string]string{}
	for i := range 2000 {
		files[fmt.Sprintf("pkg%02d/file%04d.txt", i%40, i)] = strings.Repeat(fmt.Sprintf("line %d of a typical source file\n", i), 40)
	}
	return newTestRepo(b, files)
}

// timeIt runs f with the benchmark timer on and returns its wall time.
func timeIt(b *testing.B, f func()) time.Duration {
	syscall.Sync() // start each measurement with no dirty pages from the last one
	b.StartTimer()
	start := time.Now()
	f()
	d := time.Since(start)
	b.StopTimer()
	return d
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkWorkspaceCreate: a worktree workspace on a 2,000-file repository (Prepare, pool
// off; Prepare claiming from a warm pool) against a plain `git worktree add` of the same
// repository. Goals: Prepare ≤ 1.3× git, warm pool ≤ 0.3× git.
func BenchmarkWorkspaceCreate(b *testing.B) {
	tr := benchRepo(b)
	m := newTestManager(b)
	r := openRepo(b, m, tr.dir)
	mp := newTestManager(b, func(c *Config) { c.WarmPool = 1 })
	rp := openRepo(b, mp, tr.dir)
	require.NoError(b, mp.FillPool(ctxT(b), rp))
	rawDir := b.TempDir()
	var raw, rawParallel, cold, warm []time.Duration
	b.StopTimer()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(rawDir, fmt.Sprintf("w%d", i))
		runs := []func(){
			func() {
				raw = append(raw, timeIt(b, func() {
					out, err := exec.Command("git", "-C", tr.dir, "worktree", "add", "-q", "-b", fmt.Sprintf("raw-%d", i), dir, "main").CombinedOutput()
					require.NoError(b, err, string(out))
				}))
			},
			func() { // the same with parallel checkout, as Prepare runs it
				pdir := dir + "-parallel"
				rawParallel = append(rawParallel, timeIt(b, func() {
					out, err := exec.Command("git", "-C", tr.dir, "-c", "checkout.workers=0", "worktree", "add", "-q", "-b",
						fmt.Sprintf("rawp-%d", i), pdir, "main").CombinedOutput()
					require.NoError(b, err, string(out))
				}))
				gitIn(b, tr.dir, "worktree", "remove", "--force", pdir)
			},
			func() {
				var ws Workspace
				cold = append(cold, timeIt(b, func() {
					var err error
					ws, err = m.Prepare(ctxT(b), PrepareRequest{Repo: r, MissionID: "cold", Attempt: i + 1})
					require.NoError(b, err)
				}))
				require.False(b, ws.FromPool)
			},
			func() {
				var ws Workspace
				warm = append(warm, timeIt(b, func() {
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
	reportRatios(b, "git_worktree_add", raw, map[string][]time.Duration{
		"git_worktree_add_parallel_checkout": rawParallel, "prepare": cold, "prepare_warm_pool": warm})
}

// BenchmarkLand: landing a non-conflicting mission (committed work, a diverged target that is
// not checked out, 2,000-file repository) with Manager.Land against the raw sequence
// `git merge-tree --write-tree` + `git commit-tree` + `git update-ref <new> <old>`. Goal ≤ 2×.
func BenchmarkLand(b *testing.B) {
	tr := benchRepo(b)
	tr.git("branch", "target")
	m := newTestManager(b)
	r := openRepo(b, m, tr.dir)
	var raw, landed []time.Duration
	seq := 0
	moveTarget := func(tag string) {
		blob := gitInStdin(b, tr.dir, tag+"\n", "hash-object", "-w", "--stdin")
		// the person's commit: the target's tree plus one file, made with plumbing
		idx := filepath.Join(b.TempDir(), "index")
		env := []string{"GIT_INDEX_FILE=" + idx}
		gitEnv(b, tr.dir, env, "read-tree", "target")
		gitEnv(b, tr.dir, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+",person-"+tag+".txt")
		newTree := gitEnv(b, tr.dir, env, "write-tree")
		c := gitIn(b, tr.dir, "commit-tree", "-p", "target", "-m", "person "+tag, newTree)
		gitIn(b, tr.dir, "update-ref", "refs/heads/target", c)
	}
	mission := func(name string) Workspace {
		ws, err := m.Prepare(ctxT(b), PrepareRequest{Repo: r, MissionID: name, Attempt: 1, TargetBranch: "target"})
		require.NoError(b, err)
		writeFile(b, ws.Path, "missions/"+name+".txt", name+"\n")
		seq++
		writeFile(b, ws.Path, fmt.Sprintf("pkg03/file%04d.txt", (seq*40+3)%2000), name+"\n")
		_, _, err = m.CommitPending(ctxT(b), ws, "mission "+name)
		require.NoError(b, err)
		return ws
	}
	b.StopTimer()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rawWS := mission(fmt.Sprintf("raw-%d", i))
		landWS := mission(fmt.Sprintf("land-%d", i))

		moveTarget(fmt.Sprintf("r%d", i))
		raw = append(raw, timeIt(b, func() {
			old := gitIn(b, tr.dir, "rev-parse", "refs/heads/target")
			tree := strings.TrimSpace(gitIn(b, tr.dir, "merge-tree", "--write-tree", old, rawWS.Branch))
			c := gitInStdin(b, tr.dir, "merge\n", "commit-tree", "-p", old, "-p", rawWS.Branch, "-F", "-", tree)
			gitIn(b, tr.dir, "update-ref", "refs/heads/target", c, old)
		}))

		moveTarget(fmt.Sprintf("l%d", i))
		var l Landing
		landed = append(landed, timeIt(b, func() {
			var err error
			l, err = m.Land(ctxT(b), LandRequest{Repo: r, MissionID: landWS.MissionID, Attempt: 1, Workspace: landWS})
			require.NoError(b, err)
		}))
		require.Equal(b, LandLanded, l.Status)
		require.False(b, l.FastForward)
	}
	reportRatios(b, "raw_merge_tree_commit_tree_update_ref", raw, map[string][]time.Duration{"land": landed})
}

// reportRatios reports the reference's median and each candidate's median and ratio.
func reportRatios(b *testing.B, refName string, ref []time.Duration, candidates map[string][]time.Duration) {
	b.ReportMetric(ms(median(ref)), refName+"_ms")
	line := fmt.Sprintf("%d runs, medians: %s %.1f ms", len(ref), refName, ms(median(ref)))
	for _, name := range slices.Sorted(mapsKeys(candidates)) {
		ds := candidates[name]
		ratio := float64(median(ds)) / float64(median(ref))
		b.ReportMetric(ms(median(ds)), name+"_ms")
		b.ReportMetric(ratio, name+"_ratio")
		line += fmt.Sprintf("; %s %.1f ms (%.2f×)", name, ms(median(ds)), ratio)
	}
	b.Log(line)
}

func mapsKeys(m map[string][]time.Duration) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
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
