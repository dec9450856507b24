package worktree

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A branch that merged the target into itself (as a repair does: "Merge main into …", first
// parent the branch) has the target tip as an ancestor, but a fast-forward to it would make
// main's `git log --first-parent` run through the branch and hide the commit main had gained
// meanwhile (seen in the fresh-user cluster trial: two landings missing from it). Land writes
// a merge commit with main first instead; a plain branch on top of main still fast-forwards.
func TestLand_BranchThatMergedTheTargetIsLandedByAMergeCommit(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	tr.git("checkout", "-q", "-b", "elsewhere") // main is not checked out anywhere
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	subject, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1, TargetBranch: "main"})
	require.NoError(t, err)
	writeFile(t, subject.Path, "b.txt", "b\n")
	gitIn(t, subject.Path, "add", "-A")
	gitIn(t, subject.Path, "commit", "-q", "-m", "the mission's work")

	tr.git("checkout", "-q", "main")
	writeFile(t, tr.dir, "c.txt", "c\n")
	tr.git("add", "c.txt")
	tr.git("commit", "-q", "-m", "main moves on")
	moved := tr.tip("main")
	tr.git("checkout", "-q", "elsewhere")
	// the repair's workspace: the subject's branch with main merged into it
	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "r", Attempt: 1, TargetBranch: "main",
		StartPoint: subject.Branch, MergeTarget: true})
	require.NoError(t, err)
	require.Equal(t, []string{tr.tip(subject.Branch), moved}, strings.Fields(gitIn(t, ws.Path, "log", "-1", "--format=%P", "HEAD")),
		"the repair's merge has the branch first")

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.False(t, l.FastForward, "main is on the branch tip's second parent only")
	require.Equal(t, []string{moved, l.BranchTip}, strings.Fields(tr.git("log", "-1", "--format=%P", l.Commit)))
	require.Contains(t, strings.Fields(tr.git("rev-list", "--first-parent", "main")), moved,
		"main's first-parent history keeps the commit it had before the landing")
	require.Equal(t, "b", tr.git("show", "main:b.txt"))
	require.Equal(t, "c", tr.git("show", "main:c.txt"))
	fsckClean(t, tr.dir)

	next, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "n", Attempt: 1, TargetBranch: "main"})
	require.NoError(t, err)
	writeFile(t, next.Path, "d.txt", "d\n")
	require.True(t, land(t, m, r, next).FastForward, "a branch on top of main still fast-forwards")
}
