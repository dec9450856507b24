package worktree

import (
	"strings"
	"sync"
	"testing"

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
