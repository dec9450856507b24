package scheduler_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// Bug case B68 at the landing service: a completed mission whose branch adds a symbolic link
// to a directory of the person's checkout is not landed; the landing is recorded refused,
// waits for a decision (its why names the link), and the Main Agent gets one escalation that
// names the link and its target. Nothing moved on main.
func TestLander_LinkOutOfTheRepositoryIsRefusedAndEscalatedToTheMainAgent(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "share node_modules"})
	c, err := h.s.Pull().Claim(h.ctx, engine.ClaimRequest{AgentID: "worker"})
	require.NoError(t, err)
	require.Equal(t, m.ID, c.Mission.ID)
	target := filepath.Join(h.repo, "node_modules")
	require.NoError(t, os.Symlink(target, filepath.Join(c.Workspace.Path, "node_modules")))
	git(t, c.Workspace.Path, "add", "node_modules")
	git(t, c.Workspace.Path, "commit", "-q", "-m", "link node_modules")
	_, err = h.eng.Complete(h.ctx, c.Mission.Fence(), domain.WorkerResult{Summary: "linked"})
	require.NoError(t, err)
	before := git(t, h.repo, "rev-parse", "main")

	lander := scheduler.NewLander(h.eng, h.wt, scheduler.Config{DataDir: h.data, Now: time.Now})
	require.NoError(t, lander.RunOnce(h.ctx))

	got := h.mission(m.ID)
	require.Equal(t, domain.LandingConflicted, got.Landing)
	d, err := h.eng.GetMission(h.ctx, m.ID)
	require.NoError(t, err)
	require.Len(t, d.Landings, 1)
	require.Equal(t, string(worktree.LandRefused), d.Landings[0].Status)
	require.Equal(t, domain.LandingRecordRefused, d.Landings[0].Status)
	require.Contains(t, d.Landings[0].Detail, "node_modules -> "+target)
	w, ok := got.Landing.WaitAfter(&d.Landings[0])
	require.True(t, ok)
	require.Contains(t, w.Text, "symbolic links that point outside the repository")
	escs, err := h.eng.Escalations(h.ctx, engine.EscalationFilter{State: domain.EscalationOpen, MissionID: m.ID})
	require.NoError(t, err)
	require.Len(t, escs, 1)
	require.Equal(t, "symlink", escs[0].Kind)
	require.Equal(t, domain.RouteMainAgent, escs[0].Route)
	require.Contains(t, escs[0].Reason, "node_modules -> "+target)
	require.Equal(t, []string{"node_modules -> " + target}, escs[0].Evidence)
	require.Equal(t, before, git(t, h.repo, "rev-parse", "main"), "nothing landed")

	require.NoError(t, lander.RunOnce(h.ctx))
	d, err = h.eng.GetMission(h.ctx, m.ID)
	require.NoError(t, err)
	require.Len(t, d.Landings, 1, "a refused landing waits for a decision: the next pass does not retry it")
}
