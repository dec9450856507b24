package worktree

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A scheduler process is SIGKILLed at a random moment of a landing (sometimes alone, leaving
// its git child running as an orphan; sometimes with its whole process group, git included).
// Odd iterations need a three-way merge (a person commits on the target after the attempt's
// base; checked by the landing's parents), even ones a fast-forward; each kind is killed alone
// and with its group. TestLand_SIGKILLDuringAThreeWayMergeThenRetry kills merges at each step.
// The next landing of the same attempt, by another process, completes or finds it landed;
// the work is never landed twice and the repository stays consistent.
func TestLand_SIGKILLMidLandingThenRetryNeverDoubles(t *testing.T) {
	t.Parallel()
	for _, checkedOut := range []bool{false, true} {
		t.Run(fmt.Sprintf("target_checked_out=%v", checkedOut), func(t *testing.T) {
			crashLoop(t, checkedOut, 8)
		})
	}
}

func crashLoop(t *testing.T, checkedOut bool, iterations int) {
	tr := newTestRepo(t, map[string]string{"base.txt": "base\n"})
	if !checkedOut {
		tr.git("checkout", "-q", "--detach")
	}
	dataDir := t.TempDir()
	m := newTestManager(t, func(c *Config) { c.DataDir = dataDir; c.StaleLockAge = 200 * time.Millisecond })
	r := openRepo(t, m, tr.dir)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 42))

	newAttempt := func(i int) Workspace {
		ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: fmt.Sprintf("crash-%d", i), Attempt: 1, TargetBranch: "main"})
		require.NoError(t, err)
		for f := range 20 {
			writeFile(t, ws.Path, fmt.Sprintf("mission-%d/f%02d.txt", i, f), fmt.Sprintf("%d/%d\n", i, f))
		}
		if i%2 == 1 { // a person moves main after the attempt's base, so it needs a three-way merge
			personCommits(tr, checkedOut, i)
		}
		return ws
	}

	// Calibrate: one uninterrupted landing in a helper process.
	ws := newAttempt(0)
	start := time.Now()
	out, err := helperCommand("land", helperArgs{DataDir: dataDir, RepoDir: tr.dir, Workspace: ws}).CombinedOutput()
	require.NoError(t, err, string(out))
	full := time.Since(start)
	require.Contains(t, string(out), `"status":"landed"`)

	outcomes := map[string]int{}
	for i := 1; i <= iterations; i++ {
		ws := newAttempt(i)
		before := tr.tip("main")
		cmd := helperCommand("land", helperArgs{DataDir: dataDir, RepoDir: tr.dir, Workspace: ws})
		group := (i/2)%2 == 0 // alone or with the group, for merges and fast-forwards alike
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(rng.Int64N(int64(full)))) // the random moment of the kill
		if group {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		} else {
			_ = cmd.Process.Kill()
		}
		waitErr := cmd.Wait()
		killed := waitErr != nil && strings.Contains(waitErr.Error(), "killed")
		state := crashState(t, tr, ws, before, killed)
		outcomes[state]++

		l, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: ws.MissionID, Attempt: 1, Workspace: ws})
		require.NoError(t, err, "iteration %d", i)
		require.Contains(t, []LandStatus{LandLanded, LandAlreadyLanded}, l.Status, "iteration %d: %+v\n%s", i, l,
			crashDiagnostics(tr, ws, state))

		require.True(t, isAncestor(t, tr.dir, l.BranchTip, "main"), "iteration %d", i)
		merges := tr.git("log", "--merges", "--format=%H", "--grep=^Mission-Id: "+ws.MissionID+"$", "main")
		require.LessOrEqual(t, len(strings.Fields(merges)), 1, "iteration %d: landed twice", i)
		requireLandingKind(t, tr, i, ws, l, before, merges)
		pending := tr.git("log", "--no-merges", "--format=%H", "--grep=^Mission-Id: "+ws.MissionID+"$", "main")
		require.Len(t, strings.Fields(pending), 1, "iteration %d: the pending work is committed once", i)
		again := land(t, m, r, ws)
		require.Equal(t, LandAlreadyLanded, again.Status)
		for f := range 20 {
			require.Equal(t, fmt.Sprintf("%d/%d", i, f), tr.git("show", fmt.Sprintf("main:mission-%d/f%02d.txt", i, f)))
		}
		if checkedOut {
			require.Equal(t, tr.tip("main"), tr.git("rev-parse", "HEAD"))
			require.Empty(t, tr.git("status", "--porcelain"), "iteration %d: the person's checkout is consistent\n%s", i,
				crashDiagnostics(tr, ws, state))
		}
	}
	t.Logf("one landing in a helper process: %s; where the kills struck: %v", full, outcomes)
	waitOrphansGone(t, tr.dir, dataDir)
	fsckClean(t, tr.dir)
}

// requireLandingKind checks how iteration i landed: odd iterations (the target moved after
// the attempt's base) by one merge commit whose parents are the target before the landing and
// the attempt's tip, even ones by a fast-forward to the tip.
func requireLandingKind(t *testing.T, tr *testRepo, i int, ws Workspace, l Landing, before, merges string) {
	t.Helper()
	if i%2 == 0 {
		require.Empty(t, merges, "iteration %d: a fast-forward", i)
		require.Equal(t, l.BranchTip, l.Commit, "iteration %d: a fast-forward lands the tip itself", i)
		return
	}
	require.Len(t, strings.Fields(merges), 1, "iteration %d: a three-way merge", i)
	require.Equal(t, strings.TrimSpace(merges), l.Commit, "iteration %d", i)
	parents := strings.Fields(tr.git("show", "-s", "--format=%P", l.Commit))
	require.Equal(t, []string{before, l.BranchTip}, parents, "iteration %d: merged onto the target as it was", i)
	require.NotEqual(t, ws.BaseCommit, before, "iteration %d: the target moved after the base", i)
}

// crashState describes how far a killed landing got: whether the pending work was committed,
// whether the target moved, and which git lock files it left behind.
func crashState(t *testing.T, tr *testRepo, ws Workspace, targetBefore string, killed bool) string {
	if !killed {
		return "finished before the kill"
	}
	state := "killed before committing"
	switch {
	case tr.tip("main") != targetBefore:
		state = "killed after moving the target"
	case tr.tip(ws.Branch) != ws.BaseCommit:
		state = "killed after committing, before moving the target"
	}
	var locks []string
	for _, dir := range []string{filepath.Join(tr.dir, ".git"), ws.Path} {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".lock") {
				locks = append(locks, filepath.Base(p))
			}
			return nil
		})
	}
	if len(locks) > 0 {
		state += " (left " + strings.Join(locks, ", ") + ")"
	}
	return state
}

// crashDiagnostics is what a failed crash iteration prints: how far the kill got, the state of
// the workspace and of the person's checkout, every ref's history and the branch's reflog.
func crashDiagnostics(tr *testRepo, ws Workspace, state string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "crash state: %s\n", state)
	for _, q := range []struct {
		dir  string
		args []string
	}{
		{ws.Path, []string{"status", "--porcelain"}},
		{tr.dir, []string{"status", "--porcelain"}},
		{tr.dir, []string{"log", "--all", "--oneline", "--decorate", "-n", "12"}},
		{tr.dir, []string{"reflog", "show", "--date=iso", ws.Branch}},
		{tr.dir, []string{"reflog", "show", "--date=iso", "main"}},
	} {
		out, err := gitTry(q.dir, q.args...)
		fmt.Fprintf(&b, "$ git -C %s %s (err %v)\n%s\n", q.dir, strings.Join(q.args, " "), err, out)
	}
	return b.String()
}

// A landing that needs a three-way merge is SIGKILLed at each step of it (alone, leaving its
// git as an orphan, or with its process group), some milliseconds after the step: the branch
// tip was read, the merge commit was written, the move of the target starts (`merge
// --ff-only` in the person's checkout, or `update-ref`), the target moved. The next landing
// completes or finds it landed, with exactly one merge commit whose parents are the target as
// it was and the attempt's tip; the person's checkout is clean and their next commit works.
func TestLand_SIGKILLDuringAThreeWayMergeThenRetry(t *testing.T) {
	t.Parallel()
	for _, checkedOut := range []bool{false, true} {
		t.Run(fmt.Sprintf("target_checked_out=%v", checkedOut), func(t *testing.T) {
			tr := newTestRepo(t, map[string]string{"base.txt": "base\n"})
			if !checkedOut {
				tr.git("checkout", "-q", "--detach")
			}
			dataDir := t.TempDir()
			m := newTestManager(t, func(c *Config) { c.DataDir = dataDir; c.StaleLockAge = 200 * time.Millisecond })
			r := openRepo(t, m, tr.dir)
			steps := []string{"stage.tip-read", "merge.written", "ff.before-merge", "ff.merged"}
			if !checkedOut {
				steps = []string{"stage.tip-read", "merge.written"}
			}
			outcomes := map[string]int{}
			i := 0
			for _, at := range steps {
				for _, group := range []bool{false, true} {
					for _, after := range []time.Duration{0, rand.N(15 * time.Millisecond)} {
						i++
						ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: fmt.Sprintf("merge-%d", i), Attempt: 1, TargetBranch: "main"})
						require.NoError(t, err)
						for f := range 20 {
							writeFile(t, ws.Path, fmt.Sprintf("mission-%d/f%02d.txt", i, f), fmt.Sprintf("%d/%d\n", i, f))
						}
						personCommits(tr, checkedOut, i) // the target moves after the base
						before := tr.tip("main")
						cmd := helperCommand("land", helperArgs{DataDir: dataDir, RepoDir: tr.dir, Workspace: ws,
							KillAt: at, KillAfter: after, KillGroup: group})
						cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
						out, err := cmd.CombinedOutput()
						killed := err != nil && strings.Contains(err.Error(), "killed")
						require.True(t, killed || err == nil, "helper: %v: %s", err, out)
						state := crashState(t, tr, ws, before, killed)
						outcomes[at+": "+state]++

						l, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: ws.MissionID, Attempt: 1, Workspace: ws})
						require.NoError(t, err, "%s", at)
						require.Contains(t, []LandStatus{LandLanded, LandAlreadyLanded}, l.Status, "%s: %+v\n%s", at, l,
							crashDiagnostics(tr, ws, state))
						merges := tr.git("log", "--merges", "--format=%H", "--grep=^Mission-Id: "+ws.MissionID+"$", "main")
						requireLandingKind(t, tr, 1, ws, l, before, merges)
						for f := range 20 {
							require.Equal(t, fmt.Sprintf("%d/%d", i, f), tr.git("show", fmt.Sprintf("main:mission-%d/f%02d.txt", i, f)))
						}
						require.Equal(t, LandAlreadyLanded, land(t, m, r, ws).Status)
						if checkedOut {
							require.Equal(t, tr.tip("main"), tr.git("rev-parse", "HEAD"))
							require.Empty(t, tr.git("status", "--porcelain"), "%s: the person's checkout is consistent\n%s", at,
								crashDiagnostics(tr, ws, state))
						}
					}
				}
			}
			t.Logf("where the kills struck: %v", outcomes)
			waitOrphansGone(t, tr.dir, dataDir)
			personCommits(tr, checkedOut, 0)
			fsckClean(t, tr.dir)
		})
	}
}

// personCommits makes the person commit a file of their own on main (in their checkout, or by
// checking main out for a moment when the test keeps it detached): the person's next commit
// must work whatever a killed landing left.
func personCommits(tr *testRepo, checkedOut bool, i int) {
	tr.t.Helper()
	if !checkedOut {
		tr.git("checkout", "-q", "main")
	}
	tr.write(fmt.Sprintf("person-%d.txt", i), "person\n")
	tr.commitAll(fmt.Sprintf("person %d", i))
	if !checkedOut {
		tr.git("checkout", "-q", "--detach")
	}
}
