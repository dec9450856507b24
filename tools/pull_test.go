package tools

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// TestPullMode_FullCycle: claim (workspace on disk before the answer), heartbeat, progress,
// checkpoint, yield, resume with the checkpoint, complete.
func TestPullMode_FullCycle(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "pull me", "acceptance_criteria": []string{"it works"}, "capabilities": []string{"go"}})

	none := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "agent-1", "capabilities": []string{"python"}})
	require.False(t, none.Claimed, "capabilities are a hard filter")
	require.Contains(t, none.Reason, "no runnable mission")

	c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "agent-1", "capabilities": []string{"go", "docs"}})
	require.True(t, c.Claimed)
	require.Equal(t, m.ID, c.Mission.ID)
	require.Equal(t, domain.StateRunning, c.Mission.State)
	require.Equal(t, 1, c.Attempt)
	require.Positive(t, c.Epoch)
	require.DirExists(t, c.Workspace.Path, "the workspace exists when the claim answers")
	require.FileExists(t, filepath.Join(c.Workspace.Path, ".git"))
	require.Contains(t, c.Brief, m.ID)
	require.Contains(t, c.Brief, c.Workspace.Path)
	require.Contains(t, c.Brief, "it works")
	require.Equal(t, 20, c.HeartbeatSeconds, "a third of the default 60 s lease")
	require.True(t, c.LeaseExpiresAt.After(b.clock.Now()))

	agents := ok[AgentList](b, "list_agents", nil).Agents
	require.Len(t, agents, 1)
	require.Equal(t, "agent-1", agents[0].ID)
	require.Equal(t, "external", agents[0].Kind)
	require.Equal(t, 1, agents[0].Running)

	f := map[string]any{"mission_id": m.ID, "epoch": c.Epoch}
	hb := ok[HeartbeatResult](b, "heartbeat", f)
	require.False(t, hb.Yield)
	require.Equal(t, domain.StateRunning, hb.State)
	require.Equal(t, 20, hb.NextHeartbeatSeconds)
	require.True(t, ok[Recorded](b, "report_progress", with(f, "message", "halfway", "percent", 50)).Recorded)
	require.True(t, ok[Recorded](b, "checkpoint_mission", with(f, "checkpoint", map[string]any{"step": 2}, "message", "step 2")).Recorded)

	// Preemption: the next heartbeat says yield.
	require.NoError(t, b.eng.Preempt(b.ctx, m.ID, "urgent work", "test"))
	b.clock.Advance(2 * time.Second) // past the renew interval: the heartbeat reads the store
	hb = ok[HeartbeatResult](b, "heartbeat", f)
	require.True(t, hb.Yield)
	require.Contains(t, hb.Instruction, "yield_mission")
	require.True(t, ok[Recorded](b, "yield_mission", with(f, "reason", "preempted")).Recorded)
	require.Contains(t, fails(b, "heartbeat", f), "lease lost", "the epoch is void after a yield")

	det := ok[engine.MissionDetail](b, "get_mission", map[string]any{"mission_id": m.ID})
	require.Equal(t, domain.StateInterrupted, det.Mission.State)
	require.JSONEq(t, `{"step":2}`, string(det.Mission.Checkpoint))

	c2 := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "agent-2", "capabilities": []string{"go"}})
	require.True(t, c2.Claimed)
	require.Equal(t, 2, c2.Attempt)
	require.Greater(t, c2.Epoch, c.Epoch)
	require.Contains(t, c2.Brief, `{"step":2}`, "the resumed attempt's brief carries the checkpoint")
	done := ok[MissionResult](b, "complete_mission", map[string]any{"mission_id": m.ID, "epoch": c2.Epoch, "summary": "works",
		"evidence": []string{"go test ./... ok"}, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.01}}).Mission
	require.Equal(t, domain.StateCompleted, done.State)
	require.Equal(t, domain.LandingPending, done.Landing)
	require.InDelta(t, 0.01, done.Usage.CostUSD, 1e-9)
	require.Contains(t, fails(b, "complete_mission", map[string]any{"mission_id": m.ID, "epoch": c2.Epoch, "summary": "again"}), "lease lost")
}

func with(base map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestPullMode_FailDecisions(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "flaky", "retry_budget": 3})
	c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "w"})
	r := ok[FailResult](b, "fail_mission", map[string]any{"mission_id": m.ID, "epoch": c.Epoch,
		"failure": map[string]any{"kind": "test", "tool": "go test", "diagnostic": "TestX failed", "location": "x_test.go:10"}})
	require.Equal(t, domain.StatePending, r.Mission.State)
	require.NotNil(t, r.Decision)
	require.Equal(t, domain.DecisionRetry, r.Decision.Kind)
	require.True(t, r.Mission.NotBefore.After(b.clock.Now()), "retry after a backoff")

	env := b.createMission(map[string]any{"title": "no key", "priority": 1})
	c = ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "w"})
	require.Equal(t, env.ID, c.Mission.ID)
	r = ok[FailResult](b, "fail_mission", map[string]any{"mission_id": env.ID, "epoch": c.Epoch,
		"failure": map[string]any{"kind": "auth", "summary": "API key rejected"}})
	require.Equal(t, domain.StateBlocked, r.Mission.State, "environment failures block instead of retrying")
	require.Equal(t, domain.DecisionBlock, r.Decision.Kind)
	escs := ok[EscalationList](b, "list_escalations", map[string]any{"mission_id": env.ID}).Escalations
	require.Len(t, escs, 1)
	require.Equal(t, "environment", escs[0].Kind)
}

func TestPullMode_AgentBlocksItsOwnMission(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "ambiguous"})
	c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "w"})
	esc := ok[EscalationResult](b, "block_mission", map[string]any{"mission_id": m.ID, "epoch": c.Epoch,
		"reason": "two specs disagree", "decision_required": "which one wins?"}).Escalation
	require.Equal(t, "decision", esc.Kind)
	require.Contains(t, fails(b, "heartbeat", map[string]any{"mission_id": m.ID, "epoch": c.Epoch}), "lease lost")
}

func TestClaim_WaitsForWork(t *testing.T) {
	b := setup(t, setupOpts{})
	start := time.Now()
	got := make(chan ClaimResult, 1)
	go func() {
		res, err := b.callWithProgress("claim_mission", map[string]any{"agent_id": "waiter", "wait_seconds": 60}, "tok-claim")
		if err == nil && !res.IsError {
			got <- decode[ClaimResult](b.t, res)
		}
		close(got)
	}()
	waitClaimsWaiting(t, 1)
	m := b.createMission(map[string]any{"title": "arrives late"})
	select {
	case c, okk := <-got:
		require.True(t, okk)
		require.True(t, c.Claimed)
		require.Equal(t, m.ID, c.Mission.ID)
	case <-time.After(30 * time.Second): // a bound on what must be cut short: the claim waits 60 s
		t.Fatal("a waiting claim did not wake up when work arrived")
	}
	require.Less(t, time.Since(start), 30*time.Second)
}

// TestClaim_WaitSendsProgress: a claim waiting for work with a progress token reports
// progress while it waits, growing each time.
func TestClaim_WaitSendsProgress(t *testing.T) {
	defer func(d time.Duration) { claimProgressEvery = d }(claimProgressEvery)
	claimProgressEvery = 50 * time.Millisecond
	b := setup(t, setupOpts{})
	res, err := b.callWithProgress("claim_mission", map[string]any{"agent_id": "patient", "wait_seconds": 1}, "tok-wait")
	require.NoError(t, err)
	require.False(t, decode[ClaimResult](t, res).Claimed)
	prog := b.progressFor("tok-wait")
	// One every 50 ms for a second; a loaded machine may drop ticks, so the test asks only
	// that progress came more than once while the claim waited (a count, not a rate).
	require.GreaterOrEqual(t, len(prog), 2, "progress repeated while the claim waited")
	require.True(t, slices.IsSorted(prog), "%v", prog)
	require.Empty(t, b.progressFor("other-token"))
}

func TestClaim_WaitEndsEmpty(t *testing.T) {
	b := setup(t, setupOpts{})
	start := time.Now()
	c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "waiter", "wait_seconds": 1})
	require.False(t, c.Claimed)
	require.GreaterOrEqual(t, time.Since(start), time.Second)
}

func TestClaim_Paused(t *testing.T) {
	b := setup(t, setupOpts{})
	b.createMission(map[string]any{"title": "x"})
	require.True(t, ok[PausedResult](b, "pause_scheduler", map[string]any{"reason": "maintenance"}).Paused)
	c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "w"})
	require.False(t, c.Claimed)
	require.Contains(t, c.Reason, "paused")
	st := ok[StatusResult](b, "status", nil)
	require.True(t, st.Paused)
	require.Equal(t, "idle", st.Loop)
	require.False(t, ok[PausedResult](b, "resume_scheduler", nil).Paused)
	require.True(t, ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "w"}).Claimed)
}

// TestClaim_WorkspaceFailure: when the workspace cannot be made the attempt is recorded as
// failed (kind workspace) and the call is a server error, not a claim.
func TestClaim_WorkspaceFailure(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "x"})
	b.ws.failNext = errors.New("disk full")
	_, err := b.callErr("claim_mission", map[string]any{"agent_id": "w"})
	for _, want := range []string{"disk full", "the workspace of mission " + m.ID + " (attempt 1) could not be prepared",
		"decision retry", "call claim_mission again"} {
		require.ErrorContains(t, err, want)
	}
	require.NotContains(t, err.Error(), "presented", "the caller presented no epoch")
	det := ok[engine.MissionDetail](b, "get_mission", map[string]any{"mission_id": m.ID})
	require.Equal(t, domain.StatePending, det.Mission.State)
	require.Len(t, det.Attempts, 1)
	require.Equal(t, domain.OutcomeFailed, det.Attempts[0].Outcome)
	require.Equal(t, domain.FailureWorkspace, det.Attempts[0].Failure.Kind)
}

func TestClaim_WithoutWorkspacesIsAServerError(t *testing.T) {
	b := setup(t, setupOpts{noWorkspaces: true})
	b.createMission(map[string]any{"title": "x"})
	_, err := b.callErr("claim_mission", map[string]any{"agent_id": "w"})
	require.ErrorContains(t, err, "workspaces are not configured")
	_, err = b.callErr("get_mission_diff", map[string]any{"mission_id": unknownMission})
	require.ErrorContains(t, err, "workspaces are not configured")
	require.Equal(t, 1, ok[StatusResult](b, "status", nil).Counts[domain.StatePending], "nothing was acquired")
}

func TestMissionLogAndDiff(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "write a file"})
	l := ok[MissionLog](b, "get_mission_log", map[string]any{"mission_id": m.ID})
	require.Zero(t, l.Attempt)
	require.Empty(t, l.Events)

	c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "w"})
	ok[Recorded](b, "report_progress", map[string]any{"mission_id": m.ID, "epoch": c.Epoch, "message": "writing hello.txt"})
	require.NoError(t, os.WriteFile(filepath.Join(c.Workspace.Path, "hello.txt"), []byte("hi\n"), 0o644))
	_, err := git(b.ctx, c.Workspace.Path, "add", "hello.txt")
	require.NoError(t, err)
	_, err = git(b.ctx, c.Workspace.Path, "commit", "-q", "-m", "hello")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(c.Workspace.Path, "scratch.txt"), []byte("x"), 0o644))

	d := ok[DiffResult](b, "get_mission_diff", map[string]any{"mission_id": m.ID})
	require.Equal(t, c.Workspace.BaseCommit, d.Base)
	require.Len(t, d.Files, 1)
	require.Equal(t, "hello.txt", d.Files[0].Path)
	require.Equal(t, "added", d.Files[0].Action)
	require.Contains(t, d.Patch, "+hi")
	require.True(t, d.Uncommitted)

	// A managed attempt's files (the runner's layout) are read and tailed.
	dir := filepath.Join(b.dir, "attempts", m.ID, "a1")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stdout.ndjson"), []byte("{\"type\":\"agent.heartbeat\"}\n{\"type\":\"task.progress\",\"message\":\"last line\"}\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stderr.log"), []byte("warning: x\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "exit.json"), []byte(`{"version":1,"code":0}`), 0o600))
	l = ok[MissionLog](b, "get_mission_log", map[string]any{"mission_id": m.ID, "tail_bytes": 60})
	require.Equal(t, 1, l.Attempt)
	require.NotNil(t, l.Output)
	require.Equal(t, "{\"type\":\"task.progress\",\"message\":\"last line\"}\n", l.Output.Stdout, "the tail starts at a line")
	require.True(t, l.Output.Truncated)
	require.Equal(t, "warning: x\n", l.Output.Stderr)
	require.JSONEq(t, `{"version":1,"code":0}`, string(l.Output.Exit))
	var types []string
	for _, e := range l.Events {
		types = append(types, e.Type)
	}
	require.Contains(t, types, "mission.progress")
	require.Contains(t, types, "lease.acquired")
}

func TestStatusAndEvents(t *testing.T) {
	b := setup(t, setupOpts{})
	st := ok[StatusResult](b, "status", nil)
	require.Len(t, st.Counts, len(domain.AllStates()), "every state is counted, zeros included")
	require.Contains(t, st.Loop, "idle")
	require.False(t, st.Paused)
	m := b.createMission(map[string]any{"title": "x"})
	d := ok[DispatchResult](b, "dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": "k", "title": "y"}}})
	st = ok[StatusResult](b, "status", nil)
	require.Equal(t, 2, st.Counts[domain.StatePending])
	require.Equal(t, 2, st.Total)
	require.Equal(t, 1, st.Voyages[domain.VoyageOpen])
	require.Empty(t, st.ActiveVoyages, "open voyages are counted, not listed")
	ok[MissionResult](b, "update_mission", map[string]any{"mission_id": d.IDs["k"], "priority": 1})
	require.True(t, ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "w"}).Claimed)
	st = ok[StatusResult](b, "status", nil)
	require.Equal(t, 1, st.Voyages[domain.VoyageActive])
	require.Equal(t, []VoyageItem{{ID: d.Voyage.ID, Title: "v", State: domain.VoyageActive}}, st.ActiveVoyages)
	require.Equal(t, 1, st.Agents)

	all := ok[EventList](b, "get_events", nil)
	require.NotEmpty(t, all.Events)
	require.Equal(t, all.Events[len(all.Events)-1].Seq, all.LastSeq)
	mine := ok[EventList](b, "get_events", map[string]any{"mission_id": m.ID})
	for _, e := range mine.Events {
		require.Equal(t, m.ID, e.MissionID)
	}
	require.Equal(t, "mcp:tools-test", mine.Events[0].Actor, "the actor names the client")
	voy := ok[EventList](b, "get_events", map[string]any{"voyage_id": d.Voyage.ID, "types": []string{"voyage.created"}})
	require.Len(t, voy.Events, 1)
	none := ok[EventList](b, "get_events", map[string]any{"after_seq": all.LastSeq})
	require.Empty(t, none.Events)
	require.Equal(t, all.LastSeq, none.LastSeq)
	ok[MissionResult](b, "cancel_mission", map[string]any{"mission_id": m.ID})
	next := ok[EventList](b, "get_events", map[string]any{"after_seq": all.LastSeq, "limit": 1})
	require.Len(t, next.Events, 1)
	require.Equal(t, "mission.cancelled", next.Events[0].Type)
}

// TestB17_CompleteRefusedWhenTheWorkspaceWasDeleted: a pull-mode agent whose workspace was
// deleted before its work was committed cannot complete (that would land nothing and lose the
// work silently); fail_mission then runs the mission again in a fresh workspace.
func TestB17_CompleteRefusedWhenTheWorkspaceWasDeleted(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "lose it", "retry_budget": 2})
	c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "a"})
	require.True(t, c.Claimed)
	require.NoError(t, os.RemoveAll(c.Workspace.Path))
	msg := fails(b, "complete_mission", map[string]any{"mission_id": m.ID, "epoch": c.Epoch, "summary": "done"})
	require.Contains(t, msg, "deleted before its work was committed")
	require.Contains(t, msg, "call fail_mission with failure kind workspace")
	// The agent does what the refusal says, and fail_mission takes it (it refused the kind).
	require.Contains(t, msg, "refused: workspace lost: "+c.Workspace.Path, "the one wording, as a refusal")
	require.NotContains(t, msg, "invalid argument", "the mission id and epoch were right: it is no bad argument")
	res := ok[MissionResult](b, "fail_mission", map[string]any{"mission_id": m.ID, "epoch": c.Epoch,
		"failure": map[string]any{"kind": "workspace", "summary": "workspace lost"}})
	require.Equal(t, domain.StatePending, res.Mission.State, "retried")
}

// TestClaim_NeverHeardFromIsAbandoned: a claim whose caller never heartbeats ends abandoned
// when its lease runs out; get_mission shows the outcome and the count, and no budget is
// spent; the next caller gets the mission again at once.
func TestClaim_NeverHeardFromIsAbandoned(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "x", "retry_budget": 0})
	c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "ghost"})
	require.True(t, c.Claimed)
	b.clock.Advance(b.eng.LeaseTTL() + time.Second)
	_, err := b.eng.ReapExpired(b.ctx, nil)
	require.NoError(t, err)
	det := ok[engine.MissionDetail](b, "get_mission", map[string]any{"mission_id": m.ID})
	require.Equal(t, domain.StatePending, det.Mission.State)
	require.Equal(t, 1, det.Mission.Abandons)
	require.Zero(t, det.Mission.AttemptsUsed)
	require.Equal(t, domain.OutcomeAbandoned, det.Attempts[0].Outcome)
	stale := fails(b, "heartbeat", map[string]any{"mission_id": m.ID, "epoch": c.Epoch})
	require.Contains(t, stale, "lease lost", "the vanished caller's epoch is void")
	again := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "worker"})
	require.True(t, again.Claimed, again.Reason)
	require.Equal(t, 2, again.Attempt)
}
