package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Issue 13 item 4: the workspace of an attempt is its own record, written in the transaction
// that records the launch (SetRun for managed agents, the hand-over of a pull-mode claim),
// shown by get_mission, marked removed by cleanup; the run record does not repeat it.
func TestWorkspaceRecord_WrittenWithTheLaunchShownAndRemoved(t *testing.T) {
	t.Parallel()
	b := setup(t)
	managed := b.acquire(b.create(engine.MissionSpec{Title: "managed", WriteArea: []string{"a/**"}}).ID, true)
	ws := engine.Workspace{Path: "/data/worktrees/r/" + managed.ID + "/a1", Branch: "mcp-scheduler/" + managed.ID + "/a1",
		BaseCommit: "abc123", Strategy: engine.WorkspaceWorktree, RepoID: "r", TargetBranch: "main"}
	require.NoError(t, b.e.SetRun(b.ctx, managed.Fence(), json.RawMessage(`{"mode":"managed","attempt":1,"pid":7}`), &ws))

	d, err := b.e.GetMission(b.ctx, managed.ID)
	require.NoError(t, err)
	require.Len(t, d.Workspaces, 1)
	require.Equal(t, ws, d.Workspaces[0].Workspace)
	require.Equal(t, 1, d.Workspaces[0].Attempt)
	require.Equal(t, engine.WorkspaceActive, d.Workspaces[0].State)
	require.JSONEq(t, `{"mode":"managed","attempt":1,"pid":7}`, string(d.Mission.Run))
	evs, err := b.e.Events(b.ctx, engine.EventFilter{MissionID: managed.ID, Types: []string{"attempt.launched"}})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Contains(t, string(evs[0].Data), ws.Path, "the event log still says where the attempt worked")

	require.NoError(t, b.e.WorkspaceRemoved(b.ctx, managed.ID, 1))
	got, err := b.e.Workspace(b.ctx, managed.ID, 0)
	require.NoError(t, err)
	require.Equal(t, engine.WorkspaceRemoved, got.State)
	require.Equal(t, b.clock.Now(), got.RemovedAt)
	require.NoError(t, b.e.WorkspaceRemoved(b.ctx, managed.ID, 9), "a workspace never recorded: nothing to mark")

	pulled := b.create(engine.MissionSpec{Title: "pulled", WriteArea: []string{"b/**"}})
	pws := engine.Workspace{Path: "/data/worktrees/r/" + pulled.ID + "/a1", Branch: "b1", BaseCommit: "def", Strategy: engine.WorkspaceWorktree}
	p, err := b.e.BeginClaim(b.ctx, engine.ClaimRequest{AgentID: "codex"})
	require.NoError(t, err)
	c, err := p.HandOver(b.ctx, pws, nil)
	require.NoError(t, err)
	require.Equal(t, pulled.ID, c.Mission.ID)
	got, err = b.e.Workspace(b.ctx, pulled.ID, 1)
	require.NoError(t, err)
	require.Equal(t, pws, got.Workspace)
	require.NotContains(t, string(c.Mission.Run), pws.Path)

	_, err = b.e.Workspace(b.ctx, b.create(engine.MissionSpec{Title: "none", WriteArea: []string{"c/**"}}).ID, 0)
	require.ErrorIs(t, err, domain.ErrNotFound)
	_, err = b.e.Workspace(b.ctx, "nope", 0)
	require.Error(t, err)
	require.Contains(t, err.Error(), "mission_id")
	b.verifyReplay()
}
