package worktree

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// setTestStep installs a step hook for one test and removes it at the end.
func setTestStep(t *testing.T, fn func(name string)) {
	t.Helper()
	testStep = fn
	t.Cleanup(func() { testStep = nil })
}

// A landing killed while its `git commit` of the pending work ran leaves that git running as
// an orphan. When it finishes after the next landing read the attempt branch's tip and before
// that landing's `git status` looked, the workspace looks clean while the tip read lacks the
// work: the landing must notice the branch moved and land the commit, not answer
// nothing_to_land (the crash test's first failure shape).
func TestLand_OrphanedCommitFinishingMidLandingIsLanded(t *testing.T) {
	for _, checkedOut := range []bool{false, true} {
		t.Run(map[bool]string{false: "detached", true: "checked_out"}[checkedOut], func(t *testing.T) {
			tr := newTestRepo(t, map[string]string{"base.txt": "base\n"})
			if !checkedOut {
				tr.git("checkout", "-q", "--detach")
			}
			m := newTestManager(t)
			r := openRepo(t, m, tr.dir)
			ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "orphan", Attempt: 1, TargetBranch: "main"})
			require.NoError(t, err)
			writeFile(t, ws.Path, "work.txt", "work\n")

			committed := make(chan struct{})
			var once sync.Once
			setTestStep(t, func(name string) {
				switch name {
				case "stage.tip-read":
					once.Do(func() { // the orphaned git finishes now
						msg := withTrailers("", "Commit the work the agent left uncommitted", ws.MissionID, ws.Attempt)
						gitIn(t, ws.Path, "add", "-A")
						gitIn(t, ws.Path, "commit", "-q", "-m", msg)
						close(committed)
					})
				case "probe.before-status":
					<-committed
				}
			})
			l := land(t, m, r, ws)
			require.Equal(t, LandLanded, l.Status, "%+v", l)
			require.Equal(t, tr.tip(ws.Branch), l.BranchTip)
			require.Equal(t, "work", tr.git("show", "main:work.txt"))
			pending := tr.git("log", "--no-merges", "--format=%H", "--grep=^Mission-Id: orphan$", "main")
			require.Len(t, strings.Fields(pending), 1, "the pending work is committed once")
			require.Equal(t, LandAlreadyLanded, land(t, m, r, ws).Status)
			if checkedOut {
				require.Empty(t, tr.git("status", "--porcelain"))
			}
		})
	}
}

// A landing SIGKILLed while its `git merge --ff-only` runs in the person's checkout (alone,
// leaving that git running as an orphan, or with its process group), at a random moment of
// the merge: the next landing completes or finds it landed, and the checkout is consistent.
func TestLand_SIGKILLDuringTheFastForwardThenRetry(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"base.txt": "base\n"})
	dataDir := t.TempDir()
	m := newTestManager(t, func(c *Config) { c.DataDir = dataDir; c.StaleLockAge = 200 * time.Millisecond })
	r := openRepo(t, m, tr.dir)
	outcomes := map[string]int{}
	for i := range 24 {
		ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: fmt.Sprintf("ff-%d", i), Attempt: 1, TargetBranch: "main"})
		require.NoError(t, err)
		for f := range 20 {
			writeFile(t, ws.Path, fmt.Sprintf("mission-%d/f%02d.txt", i, f), fmt.Sprintf("%d/%d\n", i, f))
		}
		before := tr.tip("main")
		args := helperArgs{DataDir: dataDir, RepoDir: tr.dir, Workspace: ws, KillAt: "ff.before-merge",
			KillAfter: rand.N(15 * time.Millisecond), KillGroup: i%2 == 0}
		cmd := helperCommand("land", args)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := cmd.CombinedOutput()
		killed := err != nil && strings.Contains(err.Error(), "killed")
		require.True(t, killed || err == nil, "helper: %v: %s", err, out)
		state := crashState(t, tr, ws, before, killed)
		outcomes[state]++

		l, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: ws.MissionID, Attempt: 1, Workspace: ws})
		require.NoError(t, err, "iteration %d", i)
		require.Contains(t, []LandStatus{LandLanded, LandAlreadyLanded}, l.Status, "iteration %d: %+v\n%s", i, l,
			crashDiagnostics(tr, ws, state))
		for f := range 20 {
			require.Equal(t, fmt.Sprintf("%d/%d", i, f), tr.git("show", fmt.Sprintf("main:mission-%d/f%02d.txt", i, f)))
		}
		require.Equal(t, tr.tip("main"), tr.git("rev-parse", "HEAD"))
		require.Empty(t, tr.git("status", "--porcelain"), "iteration %d: the person's checkout is consistent\n%s", i,
			crashDiagnostics(tr, ws, state))
	}
	t.Logf("where the kills struck: %v", outcomes)
	waitOrphansGone(t, tr.dir, dataDir)
	fsckClean(t, tr.dir)
}

// A `git merge --ff-only` of the next landing can read the person's index just before the
// orphaned merge of a killed landing writes it: it then sees the orphan's files as untracked
// and refuses. The landing sets them aside (they hold the landed content) and runs the
// fast-forward again, which the orphan has completed meanwhile, so git writes nothing: the
// files set aside must be written back, not left deleted in the person's checkout (the crash
// test's second failure shape).
func TestLand_FastForwardCompletedByAnOrphanLeavesNoFileDeleted(t *testing.T) {
	tr := newTestRepo(t, map[string]string{"base.txt": "base\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "orphan-ff", 1)
	for f := range 3 {
		writeFile(t, ws.Path, fmt.Sprintf("m/f%d.txt", f), fmt.Sprintf("%d\n", f))
		writeFile(t, tr.dir, fmt.Sprintf("m/f%d.txt", f), fmt.Sprintf("%d\n", f)) // the orphan wrote them
	}
	var once sync.Once
	setTestStep(t, func(name string) {
		if name == "ff.files-set-aside" {
			once.Do(func() { // the orphan writes its index and moves the branch
				tip := tr.tip(ws.Branch)
				tr.git("read-tree", tip)
				tr.git("update-ref", "refs/heads/main", tip)
			})
		}
	})
	l := land(t, m, r, ws)
	require.Equal(t, LandLanded, l.Status, "%+v", l)
	require.Equal(t, tr.tip("main"), tr.git("rev-parse", "HEAD"))
	require.Empty(t, tr.git("status", "--porcelain"), "the person's checkout is consistent")
	for f := range 3 {
		require.Equal(t, fmt.Sprintf("%d\n", f), readFile(t, tr.dir, fmt.Sprintf("m/f%d.txt", f)))
	}
	require.Equal(t, LandAlreadyLanded, land(t, m, r, ws).Status)
}

// LandBatch and the orphaned `git commit` of a killed landing: the orphan (its `git add -A`
// done, the work staged) finishes at each step of the batch where it could hide the work:
// before the batch's status of the workspace, after the batch committed the pending work,
// and after the batch read the branch's tip (the step at which it fooled Land). The batch
// must land the work exactly once in every case, never answer nothing_to_land, and leave the
// workspace clean. LandBatch runs its status before it reads any tip, so a clean status
// always means the tip read later holds the work (landbatch.go, commitPendingAll); this
// test fails if that order changes without Land's re-read of the branch (settleAt).
func TestLandBatch_OrphanedCommitFinishingMidBatchIsLanded(t *testing.T) {
	for _, at := range []string{"batch.before-pending", "batch.pending-done", "stage.tip-read"} {
		for _, checkedOut := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/checked_out=%v", at, checkedOut), func(t *testing.T) {
				tr := newTestRepo(t, map[string]string{"base.txt": "base\n"})
				if !checkedOut {
					tr.git("checkout", "-q", "--detach")
				}
				m := newTestManager(t)
				r := openRepo(t, m, tr.dir)
				wss := prepareOn(t, m, r, "orphan", "other")
				writeFile(t, wss[0].Path, "work.txt", "work\n")
				gitIn(t, wss[0].Path, "add", "-A") // the killed landing's git add finished
				writeFile(t, wss[1].Path, "other.txt", "other\n")

				var once sync.Once
				var orphanErr error
				setTestStep(t, func(name string) {
					if name == at {
						once.Do(func() { // the orphaned git commit finishes now (or finds nothing left)
							msg := withTrailers("", "Commit the work the agent left uncommitted", "orphan", 1)
							_, orphanErr = gitTry(wss[0].Path, "commit", "-q", "-m", msg)
						})
					}
				})
				ls := landBatch(t, m, batchOf(r, wss...))
				t.Logf("the orphan's commit: %v", orphanErr)
				for i, l := range ls {
					require.Equal(t, LandLanded, l.Status, "request %d: %+v", i, l)
					require.Equal(t, tr.tip(wss[i].Branch), l.BranchTip, "request %d", i)
					require.True(t, isAncestor(t, tr.dir, l.BranchTip, "main"), "request %d", i)
				}
				require.Equal(t, "work", tr.git("show", "main:work.txt"))
				require.Equal(t, "other", tr.git("show", "main:other.txt"))
				pending := tr.git("log", "--no-merges", "--format=%H", "--grep=^Mission-Id: orphan$", "main")
				require.Len(t, strings.Fields(pending), 1, "the pending work is committed once")
				require.Empty(t, gitIn(t, wss[0].Path, "status", "--porcelain"))
				for _, l := range landBatch(t, m, batchOf(r, wss...)) {
					require.Equal(t, LandAlreadyLanded, l.Status)
				}
				if checkedOut {
					require.Empty(t, tr.git("status", "--porcelain"))
				}
			})
		}
	}
}
