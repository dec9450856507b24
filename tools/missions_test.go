package tools

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

func TestCreateMission_DefaultsAndIdempotency(t *testing.T) {
	b := setup(t, setupOpts{})
	c := ok[CreatedMission](b, "create_mission", map[string]any{"title": "Add a README", "idempotency_key": "readme-1",
		"write_area": []string{"README.md"}, "acceptance_criteria": []string{"README exists"}, "deadline": b.clock.Now().Add(time.Hour).Format(time.RFC3339)})
	require.True(t, c.Created)
	m := c.Mission
	require.Equal(t, domain.StatePending, m.State)
	require.Equal(t, engine.DefaultPriority, m.Priority)
	require.Equal(t, b.repo, m.Repository, "the default repository is the server's")
	require.Equal(t, "Add a README", m.Brief, "the brief defaults to the title")
	require.Equal(t, engine.WorkspaceWorktree, m.Workspace)
	require.False(t, m.Deadline.IsZero())
	again := ok[CreatedMission](b, "create_mission", map[string]any{"title": "Add a README", "idempotency_key": "readme-1"})
	require.False(t, again.Created)
	require.Equal(t, m.ID, again.Mission.ID)

	dep := ok[CreatedMission](b, "create_mission", map[string]any{"title": "after", "depends_on": []string{m.ID}, "priority": 7,
		"model_policy": map[string]any{"model": "m1"}, "retry_budget": 0}).Mission
	require.Equal(t, 7, dep.Priority)
	require.Equal(t, 0, dep.RetryBudget)
	require.Equal(t, domain.ModeSchedulerForced, dep.ModelPolicy.Mode)
	det := ok[engine.MissionDetail](b, "get_mission", map[string]any{"mission_id": dep.ID})
	require.Len(t, det.DependsOn, 1)
	require.Equal(t, m.ID, det.DependsOn[0].DependsOn)
	require.NotEmpty(t, det.WhyNotRunning)
	require.Equal(t, engine.WhyHardDep, det.WhyNotRunning[0].Code, "get_mission says why it waits")
}

func TestUpdateCancelRetry(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "old"})
	u := ok[MissionResult](b, "update_mission", map[string]any{"mission_id": m.ID, "title": "new", "priority": 3,
		"write_area": []string{"docs/**"}, "deadline": b.clock.Now().Add(time.Hour).Format(time.RFC3339)}).Mission
	require.Equal(t, "new", u.Title)
	require.Equal(t, 3, u.Priority)
	require.Equal(t, []string{"docs/**"}, u.WriteArea)
	require.False(t, u.Deadline.IsZero())
	u = ok[MissionResult](b, "update_mission", map[string]any{"mission_id": m.ID, "deadline": ""}).Mission
	require.True(t, u.Deadline.IsZero(), "an empty deadline removes it")

	c := ok[MissionResult](b, "cancel_mission", map[string]any{"mission_id": m.ID, "reason": "not needed", "skip": true}).Mission
	require.Equal(t, domain.StateCancelled, c.State)
	require.True(t, c.Skipped)
	r := ok[MissionResult](b, "retry_mission", map[string]any{"mission_id": m.ID}).Mission
	require.Equal(t, domain.StatePending, r.State)
}

func TestBlockAndResolve(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "needs a decision"})
	esc := ok[EscalationResult](b, "block_mission", map[string]any{"mission_id": m.ID, "reason": "which database?",
		"decision_required": "pick postgres or sqlite", "route": "architect", "evidence": []string{"both are used"}}).Escalation
	require.Equal(t, domain.RouteArchitect, esc.Route)
	require.Equal(t, []string{m.ID}, esc.MissionIDs)
	det := ok[engine.MissionDetail](b, "get_mission", map[string]any{"mission_id": m.ID})
	require.Equal(t, domain.StateBlocked, det.Mission.State)
	require.NotNil(t, det.Escalation)
	require.Equal(t, esc.ID, det.Escalation.ID)

	open := ok[EscalationList](b, "list_escalations", nil)
	require.Len(t, open.Escalations, 1)
	require.Len(t, ok[EscalationList](b, "list_escalations", map[string]any{"route": "person"}).Escalations, 0)

	res := ok[EscalationResult](b, "resolve_escalation", map[string]any{"escalation_id": esc.ID, "action": "retry", "note": "sqlite"}).Escalation
	require.Equal(t, domain.EscalationResolved, res.State)
	require.Equal(t, domain.StatePending, ok[engine.MissionDetail](b, "get_mission", map[string]any{"mission_id": m.ID}).Mission.State)
	require.Empty(t, ok[EscalationList](b, "list_escalations", nil).Escalations)
	require.Len(t, ok[EscalationList](b, "list_escalations", map[string]any{"state": "all"}).Escalations, 1)
	require.Len(t, ok[EscalationList](b, "list_escalations", map[string]any{"state": "resolved", "mission_id": m.ID}).Escalations, 1)

	raised := ok[EscalationResult](b, "escalate", map[string]any{"reason": "tests are slow", "decision_required": "accept?",
		"mission_ids": []string{m.ID}, "route": "person"}).Escalation
	require.Equal(t, "report", raised.Kind)
	require.Equal(t, domain.StatePending, ok[engine.MissionDetail](b, "get_mission", map[string]any{"mission_id": m.ID}).Mission.State,
		"escalate changes no mission")
}

func TestListMissions_FiltersAndPages(t *testing.T) {
	b := setup(t, setupOpts{})
	var ids []string
	for _, title := range []string{"a", "b", "c"} {
		args := map[string]any{"title": title, "persona": "implementer"}
		if title == "c" {
			args["target_branch"] = "main"
		}
		ids = append(ids, b.createMission(args).ID)
	}
	ok[MissionResult](b, "cancel_mission", map[string]any{"mission_id": ids[1]})
	p1 := ok[MissionList](b, "list_missions", map[string]any{"limit": 2})
	require.Len(t, p1.Missions, 2)
	require.Equal(t, ids[1], p1.NextCursor)
	p2 := ok[MissionList](b, "list_missions", map[string]any{"limit": 2, "cursor": p1.NextCursor})
	require.Len(t, p2.Missions, 1)
	require.Equal(t, ids[2], p2.Missions[0].ID)
	require.Equal(t, "main", p2.Missions[0].TargetBranch)
	require.Empty(t, p1.Missions[0].TargetBranch, "the repository's default")
	require.Empty(t, p2.NextCursor)
	pending := ok[MissionList](b, "list_missions", map[string]any{"states": []string{"pending"}, "persona": "implementer"})
	require.Len(t, pending.Missions, 2)
	require.Empty(t, ok[MissionList](b, "list_missions", map[string]any{"kind": "review"}).Missions)
	require.Equal(t, "a", ok[MissionList](b, "list_missions", nil).Missions[0].Title)
}

func TestDispatch_KeysEdgesAndExistingIDs(t *testing.T) {
	b := setup(t, setupOpts{})
	before := b.createMission(map[string]any{"title": "schema"})
	d := ok[DispatchResult](b, "dispatch", map[string]any{
		"title": "rate limiting", "goal": "protect the API", "priority": 20,
		"missions": []any{
			map[string]any{"key": "limiter", "title": "limiter", "write_area": []string{"internal/ratelimit/**"}},
			map[string]any{"key": "mw", "title": "middleware", "write_area": []string{"internal/http/**"}, "depends_on": []string{"limiter"}},
			map[string]any{"key": "docs", "title": "docs", "write_area": []string{"docs/**"}, "priority": 200},
		},
		"edges": []any{
			map[string]any{"mission": "docs", "depends_on": "mw", "type": "soft", "reason": "describe the final API"},
			map[string]any{"mission": "limiter", "depends_on": before.ID},
		},
	})
	require.True(t, d.Created)
	require.Len(t, d.IDs, 3)
	require.Equal(t, domain.VoyageOpen, d.Voyage.State)
	require.Equal(t, 3, d.Counts[domain.StatePending])
	require.False(t, d.Settled)
	vs := ok[engine.VoyageDetail](b, "voyage_status", map[string]any{"voyage_id": d.Voyage.ID})
	require.Len(t, vs.Missions, 3)
	byKey := map[string]engine.MissionLine{}
	for _, m := range vs.Missions {
		byKey[m.Key] = m
	}
	require.Equal(t, 20, byKey["limiter"].Priority, "voyage priority is the default")
	require.Equal(t, 200, byKey["docs"].Priority)
	require.Equal(t, engine.WhyHardDep, byKey["mw"].Why[0].Code)
	lim := ok[engine.MissionDetail](b, "get_mission", map[string]any{"mission_id": d.IDs["limiter"]})
	require.Equal(t, before.ID, lim.DependsOn[0].DependsOn, "an edge may name an existing mission id")

	// The same idempotency key returns the same voyage.
	args := map[string]any{"title": "once", "idempotency_key": "plan-7", "missions": []any{map[string]any{"key": "x", "title": "x"}}}
	first := ok[DispatchResult](b, "dispatch", args)
	second := ok[DispatchResult](b, "dispatch", args)
	require.False(t, second.Created)
	require.Equal(t, first.Voyage.ID, second.Voyage.ID)
	require.Equal(t, first.IDs, second.IDs)

	cv := ok[VoyageResult](b, "cancel_voyage", map[string]any{"voyage_id": d.Voyage.ID, "reason": "changed plans"}).Voyage
	require.Equal(t, domain.VoyageCancelled, cv.State)
	require.Contains(t, fails(b, "cancel_voyage", map[string]any{"voyage_id": d.Voyage.ID}), "already cancelled")
	vs = ok[engine.VoyageDetail](b, "voyage_status", map[string]any{"voyage_id": d.Voyage.ID})
	require.Equal(t, 3, vs.Counts[domain.StateCancelled])
}

func TestDispatch_AtomicOnError(t *testing.T) {
	b := setup(t, setupOpts{})
	fails(b, "dispatch", map[string]any{"title": "bad", "missions": []any{
		map[string]any{"key": "a", "title": "a"}, map[string]any{"key": "b", "title": "b", "depends_on": []string{"a"}}},
		"edges": []any{map[string]any{"mission": "a", "depends_on": "b", "type": "serialization"}}})
	require.Empty(t, ok[MissionList](b, "list_missions", nil).Missions, "nothing of a refused dispatch is stored")
	st := ok[StatusResult](b, "status", nil)
	require.Zero(t, st.Total)
}

// TestDispatch_WaitStreamsProgressUntilSettled: with wait_seconds and a progress token the
// call reports progress as the voyage moves and answers when it settles. The scheduler loop
// is not on main yet, so the test does its part: a pull-mode agent claims and completes the
// missions, the landing is recorded and the voyage settled through the engine.
func TestDispatch_WaitStreamsProgressUntilSettled(t *testing.T) {
	b := setup(t, setupOpts{})
	done := make(chan DispatchResult, 1)
	go func() {
		var req = map[string]any{"title": "two steps", "wait_seconds": 60, "missions": []any{
			map[string]any{"key": "one", "title": "one", "write_area": []string{"a/**"}},
			map[string]any{"key": "two", "title": "two", "write_area": []string{"b/**"}}}}
		res, err := b.callWithProgress("dispatch", req, "tok-dispatch")
		if err == nil && !res.IsError {
			done <- decode[DispatchResult](b.t, res)
		} else {
			close(done)
		}
	}()
	testenv.WaitFor(t, "the voyage", func() bool {
		return len(ok[MissionList](b, "list_missions", map[string]any{"states": []string{"pending"}}).Missions) == 2
	})
	for range 2 {
		c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "worker"})
		require.True(t, c.Claimed)
		ok[MissionResult](b, "complete_mission", map[string]any{"mission_id": c.Mission.ID, "epoch": c.Epoch, "summary": "done"})
		_, err := b.eng.RecordLanding(b.ctx, domain.Landing{MissionID: c.Mission.ID, Attempt: c.Mission.Attempt, Status: "landed"}, domain.LandingLanded)
		require.NoError(t, err)
	}
	vid := ok[MissionList](b, "list_missions", nil).Missions[0].VoyageID
	s, err := b.eng.SettleVoyage(b.ctx, vid, nil)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageCompleted, s.Voyage.State)
	var res DispatchResult
	select {
	case r, okk := <-done:
		require.True(t, okk, "dispatch failed")
		res = r
	case <-time.After(30 * time.Second): // a bound on what must be cut short: the dispatch waits 60 s
		t.Fatal("dispatch did not answer when the voyage settled")
	}
	require.True(t, res.Settled)
	require.Equal(t, domain.VoyageCompleted, res.Voyage.State)
	require.Equal(t, 2, res.Counts[domain.StateCompleted])
	require.Less(t, res.Waited, 30.0)
	prog := b.progressFor("tok-dispatch")
	require.NotEmpty(t, prog, "progress notifications were sent")
	require.True(t, slices.IsSorted(prog), "progress grows: %v", prog)
}

func TestDispatch_WaitTimesOut(t *testing.T) {
	b := setup(t, setupOpts{})
	start := time.Now()
	res := ok[DispatchResult](b, "dispatch", map[string]any{"title": "idle", "wait_seconds": 1,
		"missions": []any{map[string]any{"key": "x", "title": "x"}}})
	require.False(t, res.Settled)
	require.GreaterOrEqual(t, time.Since(start), time.Second)
	require.GreaterOrEqual(t, res.Waited, 1.0)
	require.Empty(t, b.notes.byMethod("notifications/progress"), "no progress token, no progress notifications")
}

func TestApproveLanding(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "needs approval"})
	c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "w"})
	require.Equal(t, m.ID, c.Mission.ID)
	ok[MissionResult](b, "complete_mission", map[string]any{"mission_id": m.ID, "epoch": c.Epoch, "summary": "ok"})
	_, err := b.eng.AwaitApproval(b.ctx, m.ID, "policy approval")
	require.NoError(t, err)
	a := ok[MissionResult](b, "approve_landing", map[string]any{"mission_id": m.ID, "note": "looks good"}).Mission
	require.Equal(t, domain.LandingApproved, a.Landing)
	require.Contains(t, fails(b, "approve_landing", map[string]any{"mission_id": m.ID}), "not waiting for approval")
}

// TestStatusCache_NeverStale: with the notifier running, status is served from a cache that
// every committed change invalidates before the call that made it returns, another
// process's change invalidates through the DataVersion watcher, and event-less changes
// (an agent seen) show within a second.
func TestStatusCache_NeverStale(t *testing.T) {
	b := setup(t, setupOpts{})
	require.Zero(t, ok[StatusResult](b, "status", nil).Total)
	for i := range 5 {
		_, err := b.eng.CreateMission(b.ctx, engine.MissionSpec{Title: "direct"}, "test")
		require.NoError(t, err)
		require.Equal(t, i+1, ok[StatusResult](b, "status", nil).Total, "a change is seen by the next status at once")
	}
	// Another process: a second store and engine on the same database file.
	other, err := teststore.Open(b.ctx, teststore.LocationIn(b.dir))
	require.NoError(t, err)
	defer other.Close()
	e2 := engine.New(other, engine.Options{DefaultRepository: b.repo})
	watchCtx, stop := context.WithCancel(b.ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = b.eng.WatchExternal(watchCtx, 20*time.Millisecond) })
	defer func() { stop(); wg.Wait() }()
	_, err = e2.CreateMission(b.ctx, engine.MissionSpec{Title: "from elsewhere"}, "other")
	require.NoError(t, err)
	testenv.WaitFor(t, "the other process's mission", func() bool { return ok[StatusResult](b, "status", nil).Total == 6 })
	require.NoError(t, b.eng.TouchAgent(b.ctx, domain.Agent{ID: "quiet", Kind: "external"}))
	testenv.WaitFor(t, "the agent", func() bool { return ok[StatusResult](b, "status", nil).Agents == 1 })
}
