package scheduler_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// claim claims work through the pull service, failing the test otherwise.
func (h *harness) claim(agentID string) engine.Claimed {
	h.t.Helper()
	c, err := h.s.Pull().Claim(h.ctx, engine.ClaimRequest{AgentID: agentID})
	require.NoError(h.t, err)
	return c
}

// The claim path in one direction (issue 13): the pull service claims through the engine's
// steps and makes a real worktree in between; the workspace record in the store is the
// workspace handed over, the brief is in the workspace in pull-mode wording, the lease is the
// caller's, and completed work lands.
func TestPull_ClaimMakesTheWorkspaceAndRecordsIt(t *testing.T) {
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.Profiles = nil }))
	m := h.create(engine.MissionSpec{Title: "add a file", WriteArea: []string{"added.txt"}})
	c := h.claim("codex")
	require.Equal(t, m.ID, c.Mission.ID)
	require.Equal(t, domain.StateRunning, c.Mission.State)
	require.Equal(t, "codex", c.Mission.Lease.Owner)
	require.Equal(t, int(h.eng.LeaseTTL().Seconds()/3), c.HeartbeatSeconds)

	ws := c.Workspace
	require.Equal(t, engine.WorkspaceWorktree, ws.Strategy)
	require.NotEmpty(t, ws.Branch)
	require.Equal(t, git(t, h.repo, "rev-parse", "main"), ws.BaseCommit)
	require.Equal(t, ws.Branch, git(t, ws.Path, "rev-parse", "--abbrev-ref", "HEAD"), "a real worktree on the attempt's branch")
	brief, err := os.ReadFile(filepath.Join(ws.Path, ".mcp-scheduler", "brief.md"))
	require.NoError(t, err)
	require.Contains(t, string(brief), "complete_mission", "the pull-mode brief")
	require.Contains(t, string(brief), m.ID)

	rec, err := h.eng.Workspace(h.ctx, m.ID, 1)
	require.NoError(t, err)
	require.Equal(t, ws, rec.Workspace, "the store's workspace record is what was handed over")
	require.Equal(t, engine.WorkspaceActive, rec.State)
	run := h.runRecord(m.ID)
	require.Equal(t, scheduler.ModePull, run.Mode)
	require.Equal(t, "codex", run.Agent)
	evs, err := h.eng.Events(h.ctx, engine.EventFilter{MissionID: m.ID, Types: []string{"attempt.launched"}})
	require.NoError(t, err)
	require.Len(t, evs, 1)

	_, err = h.eng.Heartbeat(h.ctx, c.Mission.Fence())
	require.NoError(t, err, "the lease is the caller's")
	require.NoError(t, os.WriteFile(filepath.Join(ws.Path, "added.txt"), []byte("added\n"), 0o644))
	git(t, ws.Path, "add", "added.txt")
	git(t, ws.Path, "commit", "-q", "-m", "add a file")
	done, err := h.s.Pull().Complete(h.ctx, c.Mission.Fence(), domain.WorkerResult{Summary: "added"})
	require.NoError(t, err)
	require.Equal(t, domain.StateCompleted, done.State)
	require.NoError(t, scheduler.NewLander(h.eng, h.wt, scheduler.Config{DataDir: h.data}).RunOnce(h.ctx))
	body, ok := h.file("added.txt")
	require.True(t, ok, "the claimed work landed")
	require.Equal(t, "added\n", body)
}

// A mission taken away while its workspace is made costs it nothing and the claim moves on
// to the next one; after three such losses, or when nothing else is runnable, the caller is
// told what happened, as "no work", in words.
func TestPull_ClaimMovesOnWhenTheMissionIsTakenAway(t *testing.T) {
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.Profiles = nil }))
	first := h.create(engine.MissionSpec{Title: "first", WriteArea: []string{"a/**"}, Priority: 1})
	second := h.create(engine.MissionSpec{Title: "second", WriteArea: []string{"b/**"}, Priority: 2})
	pull := h.s.Pull()
	var taken []string
	cancel := func(m domain.Mission) {
		taken = append(taken, m.ID)
		_, err := h.eng.Cancel(h.ctx, m.ID, "not needed", false, "person")
		require.NoError(t, err)
	}
	scheduler.SetBeforeHandOver(pull, func(m domain.Mission) {
		if m.ID == first.ID {
			cancel(m)
		}
	})
	c, err := pull.Claim(h.ctx, engine.ClaimRequest{AgentID: "w"})
	require.NoError(t, err)
	require.Equal(t, second.ID, c.Mission.ID)
	require.Equal(t, []string{first.ID}, taken)
	f := h.mission(first.ID)
	require.Equal(t, domain.StateCancelled, f.State)
	require.Nil(t, f.LastFailure, "the cancelled mission was not failed by the claim")
	require.Zero(t, f.AttemptsUsed)

	lost := func(err error) *engine.ClaimLostError {
		t.Helper()
		var l *engine.ClaimLostError
		require.ErrorAs(t, err, &l)
		require.ErrorIs(t, err, domain.ErrNoWork)
		require.Contains(t, err.Error(), "was cancelled while its workspace was being prepared")
		require.NotContains(t, err.Error(), "you presented")
		return l
	}
	// One mission, lost, and nothing else runnable: the loss is the answer.
	only := h.create(engine.MissionSpec{Title: "only", WriteArea: []string{"c/**"}})
	scheduler.SetBeforeHandOver(pull, cancel)
	taken = nil
	_, err = pull.Claim(h.ctx, engine.ClaimRequest{AgentID: "w"})
	require.Equal(t, only.ID, lost(err).MissionID)
	require.Equal(t, []string{only.ID}, taken)

	// Four missions, every one lost: the claim gives up after three, the fourth still waits.
	var ids []string
	for _, area := range []string{"d/**", "e/**", "f/**", "g/**"} {
		ids = append(ids, h.create(engine.MissionSpec{Title: area, WriteArea: []string{area}}).ID)
	}
	taken = nil
	_, err = pull.Claim(h.ctx, engine.ClaimRequest{AgentID: "w"})
	require.Equal(t, taken[2], lost(err).MissionID, "the last loss is the answer")
	require.Len(t, taken, 3)
	require.ElementsMatch(t, ids, append(taken, ids[3]), "the fourth was not claimed")
	require.Equal(t, domain.StatePending, h.mission(ids[3]).State)
}

// A workspace that cannot be made fails the attempt (kind workspace, within its budget) with
// the reason recorded; the caller gets a server error naming the mission, the cause and the
// decision, and nothing is handed over or recorded as its workspace.
func TestPull_ClaimWorkspaceFailureFailsTheAttempt(t *testing.T) {
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.Profiles = nil }))
	m := h.create(engine.MissionSpec{Title: "no branch", WriteArea: []string{"a/**"}, TargetBranch: "nowhere", RetryBudget: ptr(2)})
	_, err := h.s.Pull().Claim(h.ctx, engine.ClaimRequest{AgentID: "w"})
	var ce *engine.ClaimError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, m.ID, ce.MissionID)
	for _, want := range []string{m.ID, "could not be prepared", "nowhere", "decision retry", "call claim_mission again"} {
		require.Contains(t, err.Error(), want)
	}
	got := h.mission(m.ID)
	require.Equal(t, domain.StatePending, got.State)
	require.Equal(t, 1, got.AttemptsUsed)
	require.Equal(t, domain.FailureWorkspace, got.LastFailure.Kind)
	require.Contains(t, got.LastFailure.Diagnostic, "nowhere")
	_, err = h.eng.Workspace(h.ctx, m.ID, 1)
	require.ErrorIs(t, err, domain.ErrNotFound, "no workspace was recorded")
}

// shared/cases B17 for work that finished: a pull-mode attempt whose workspace directory was
// deleted while its work was not committed cannot complete — it would land nothing — and the
// refusal writes nothing; the agent fails the attempt and the next claim works in a fresh
// workspace. A stale epoch is answered lease lost, not workspace lost.
func TestB17_PullCompleteRefusedWhenTheWorkspaceWasDeletedWithUncommittedWork(t *testing.T) {
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.Profiles = nil }))
	m := h.create(engine.MissionSpec{Title: "lose it", WriteArea: []string{"lost.txt"}, RetryBudget: ptr(2)})
	c := h.claim("a")
	require.NoError(t, os.WriteFile(filepath.Join(c.Workspace.Path, "lost.txt"), []byte("never committed\n"), 0o644))
	require.NoError(t, os.RemoveAll(c.Workspace.Path))

	pull := h.s.Pull()
	_, err := pull.Complete(h.ctx, c.Mission.Fence(), domain.WorkerResult{Summary: "done"})
	var wl *domain.WorkspaceLostError
	require.ErrorAs(t, err, &wl)
	require.ErrorIs(t, err, domain.ErrWorkspaceLost)
	require.Equal(t, c.Workspace.Path, wl.Path)
	require.Equal(t, m.ID, wl.MissionID)
	require.Equal(t, 1, wl.Attempt)
	require.Contains(t, err.Error(), "deleted before its work was committed")
	got := h.mission(m.ID)
	require.Equal(t, domain.StateRunning, got.State, "the refusal wrote nothing")
	require.Equal(t, c.Mission.Lease.Epoch, got.Lease.Epoch)

	stale := c.Mission.Fence()
	stale.Epoch--
	_, err = pull.Complete(h.ctx, stale, domain.WorkerResult{Summary: "done"})
	require.ErrorIs(t, err, domain.ErrLeaseLost)
	require.False(t, errors.Is(err, domain.ErrWorkspaceLost))

	_, err = h.eng.Fail(h.ctx, c.Mission.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureWorkspace, Summary: "workspace lost"}})
	require.NoError(t, err)
	var next engine.Claimed
	testenv.WaitFor(t, "a claim after the retry's backoff (at most 200 ms here)", func() bool {
		next, err = pull.Claim(h.ctx, engine.ClaimRequest{AgentID: "a"})
		require.True(t, err == nil || errors.Is(err, domain.ErrNoWork), "claim: %v", err)
		return err == nil
	})
	require.Equal(t, m.ID, next.Mission.ID)
	require.Equal(t, 2, next.Mission.Attempt)
	require.DirExists(t, next.Workspace.Path, "the next attempt works in a fresh workspace")
	_, err = pull.Complete(h.ctx, next.Mission.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)
}

// B17's other half: when the work was committed on the attempt's branch and only the
// directory is gone, nothing is lost — the completion goes through and the work lands.
func TestB17_PullCompleteAllowedWhenTheWorkWasCommitted(t *testing.T) {
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.Profiles = nil }))
	m := h.create(engine.MissionSpec{Title: "keep it", WriteArea: []string{"kept.txt"}})
	c := h.claim("a")
	require.NoError(t, os.WriteFile(filepath.Join(c.Workspace.Path, "kept.txt"), []byte("committed\n"), 0o644))
	git(t, c.Workspace.Path, "add", "kept.txt")
	git(t, c.Workspace.Path, "commit", "-q", "-m", "keep it")
	require.NoError(t, os.RemoveAll(c.Workspace.Path))

	done, err := h.s.Pull().Complete(h.ctx, c.Mission.Fence(), domain.WorkerResult{Summary: "kept"})
	require.NoError(t, err)
	require.Equal(t, domain.StateCompleted, done.State)
	require.Equal(t, m.ID, done.ID)
	require.NoError(t, scheduler.NewLander(h.eng, h.wt, scheduler.Config{DataDir: h.data}).RunOnce(h.ctx))
	body, ok := h.file("kept.txt")
	require.True(t, ok, "the committed work landed although its directory was gone")
	require.Equal(t, "committed\n", body)
}
