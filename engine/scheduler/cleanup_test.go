package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Cleanup removes the workspace and branch of a landed mission and keeps those of a failed
// one (evidence until someone decides) and of a running one. The workspace records say so:
// removed (with when) for the landed one, active for the failed one.
func TestCleanup_RemovesLandedKeepsFailed(t *testing.T) {
	h := newHarness(t)
	landed := h.create(engine.MissionSpec{Title: "lands", WriteArea: []string{"l.txt"}, Brief: "@write l.txt x\n@commit l\n@done"})
	failed := h.create(engine.MissionSpec{Title: "fails", WriteArea: []string{"f.txt"}, RetryBudget: ptr(0),
		Brief: "@write f.txt half\n@commit half\n@fail test broken"})
	h.until("one lands, one fails", func() bool {
		return h.mission(landed.ID).Landing == domain.LandingLanded && h.mission(failed.ID).State == domain.StateFailed
	})
	landedWS, failedWS := h.runRecord(landed.ID).Worktree, h.runRecord(failed.ID).Worktree
	require.DirExists(t, landedWS.Path)

	dry, err := h.s.Cleanup(h.ctx, "", time.Nanosecond, true)
	require.NoError(t, err)
	require.Len(t, dry, 1)
	require.Len(t, dry[0].Report.Removed, 1, "a dry run reports")
	require.DirExists(t, landedWS.Path, "…and changes nothing")

	reps, err := h.s.Cleanup(h.ctx, "", time.Nanosecond, false)
	require.NoError(t, err)
	require.Len(t, reps[0].Report.Removed, 1)
	require.Equal(t, landed.ID, reps[0].Report.Removed[0].MissionID)
	require.NoDirExists(t, landedWS.Path)
	require.DirExists(t, failedWS.Path, "failed work stays as evidence")
	gone, err := h.eng.Workspace(h.ctx, landed.ID, 0)
	require.NoError(t, err)
	require.Equal(t, engine.WorkspaceRemoved, gone.State)
	require.False(t, gone.RemovedAt.IsZero())
	require.Equal(t, landedWS.Path, gone.Path)
	kept, err := h.eng.Workspace(h.ctx, failed.ID, 0)
	require.NoError(t, err)
	require.Equal(t, engine.WorkspaceActive, kept.State)
	require.Equal(t, failedWS.Branch, kept.Branch)
	require.NotEmpty(t, kept.BaseCommit)
	require.NotEmpty(t, kept.RepoID)
	require.NotContains(t, string(h.mission(failed.ID).Run), failedWS.Path, "the run record does not repeat the workspace")
	branches := git(t, h.repo, "branch", "--list", "mcp-scheduler/*")
	require.NotContains(t, branches, landedWS.Branch)
	require.Contains(t, branches, failedWS.Branch)
	body, ok := h.file("l.txt")
	require.True(t, ok, "the landed work is on main")
	require.Equal(t, "x", body)
}
