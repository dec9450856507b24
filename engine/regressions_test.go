package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Regressions found by TestProperty_EngineMatchesModel, each as a small named case.

// An environment failure (auth, quota, ...) blocks the mission with an escalation, from
// leased as well as from running.
func TestFail_EnvironmentKindBlocksFromLeasedAndRunning(t *testing.T) {
	t.Parallel()
	for _, start := range []bool{false, true} {
		b := setup(t)
		m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}})
		m = b.acquire(m.ID, start)
		got, err := b.e.Fail(b.ctx, m.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureAuth, Summary: "401"}})
		require.NoError(t, err, "from %s", m.State)
		require.Equal(t, domain.StateBlocked, got.State)
		require.NotEmpty(t, got.EscalationID)
		require.Zero(t, got.AttemptsUsed, "an environment failure spends no budget")
		b.verifyReplay()
	}
}

// A lease that expires when the budget is spent fails the mission; before the fix the reap
// returned an error and the mission stayed leased for ever.
func TestReap_ExpiryWithBudgetSpentFailsTheMission(t *testing.T) {
	t.Parallel()
	for _, start := range []bool{false, true} {
		b := setup(t)
		up := b.create(engine.MissionSpec{RetryBudget: budget(0), WriteArea: []string{"a/**"}})
		down := b.create(engine.MissionSpec{DependsOn: []string{up.ID}, WriteArea: []string{"b/**"}})
		got := b.acquire(up.ID, start)
		_, err := b.e.Heartbeat(b.ctx, got.Fence()) // heard from: its expiry is a crash, not an abandon
		require.NoError(t, err)
		b.clock.Advance(b.e.LeaseTTL() + time.Second)
		reaped, err := b.e.ReapExpired(b.ctx, nil)
		require.NoError(t, err)
		require.Equal(t, []string{up.ID}, reaped)
		require.Equal(t, domain.StateFailed, b.get(up.ID).State)
		require.Equal(t, domain.StateBlocked, b.get(down.ID).State, "the failure blocks its hard dependents")
		b.verifyReplay()
	}
}

// A lease that expires over the cost limit blocks the mission (decision block from expire).
func TestReap_ExpiryOverCostLimitBlocks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}, CostLimitUSD: 5})
	m = b.acquire(m.ID, true)
	_, err := b.e.Fail(b.ctx, m.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: "test"}, Usage: &domain.Usage{CostUSD: 2}})
	require.NoError(t, err)
	limit := 1.0
	_, err = b.e.UpdateMission(b.ctx, m.ID, engine.MissionPatch{CostLimitUSD: &limit}, "test")
	require.NoError(t, err)
	b.clock.Advance(time.Hour) // past the backoff
	m = b.acquire(m.ID, true)
	_, err = b.e.Heartbeat(b.ctx, m.Fence()) // heard from: its expiry is a crash, not an abandon
	require.NoError(t, err)
	b.clock.Advance(b.e.LeaseTTL() + time.Second)
	_, err = b.e.ReapExpired(b.ctx, nil)
	require.NoError(t, err)
	require.Equal(t, domain.StateBlocked, b.get(m.ID).State)
	b.verifyReplay()
}

// Retrying a mission whose hard dependency is still cancelled (or failed) blocks it again at
// once, naming the dependency, instead of leaving it pending for ever (B14).
func TestB14_RetriedDependentOfCancelledUpstreamBlocksAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	up := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}})
	down := b.create(engine.MissionSpec{DependsOn: []string{up.ID}, WriteArea: []string{"b/**"}})
	_, err := b.e.Cancel(b.ctx, up.ID, "no longer needed", false, "test")
	require.NoError(t, err)
	require.Equal(t, domain.StateBlocked, b.get(down.ID).State)
	_, err = b.e.Retry(b.ctx, down.ID, "test")
	require.NoError(t, err)
	d, err := b.e.GetMission(b.ctx, down.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StateBlocked, d.Mission.State)
	require.NotNil(t, d.Escalation)
	require.Equal(t, up.ID, d.Escalation.CauseID)
	_, err = b.e.Retry(b.ctx, up.ID, "test")
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, b.get(down.ID).State, "retrying the upstream reopens it")
	b.verifyReplay()
}

// A caller's conflict edge between two missions whose write areas overlap is accepted (the
// scheduler already made one) and outlives the scheduler's edge.
func TestDispatch_UserConflictEdgeOverOverlappingWriteAreas(t *testing.T) {
	t.Parallel()
	b := setup(t)
	old := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}})
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "new", Title: "n", WriteArea: []string{"a/x/**"}}},
		Edges: []engine.EdgeSpec{{Mission: "new", DependsOn: old.ID, Type: domain.EdgeConflict, Reason: "same service"}}}, "test")
	require.NoError(t, err)
	id := d.IDs["new"]
	detail, err := b.e.GetMission(b.ctx, id)
	require.NoError(t, err)
	require.Len(t, detail.DependsOn, 1)
	require.Equal(t, domain.SourceUser, detail.DependsOn[0].Source)
	require.Equal(t, "same service", detail.DependsOn[0].Reason)
	// The old mission's write area ends with it; the user's conflict edge stays.
	_, err = b.e.Cancel(b.ctx, old.ID, "", false, "test")
	require.NoError(t, err)
	detail, err = b.e.GetMission(b.ctx, id)
	require.NoError(t, err)
	require.Len(t, detail.DependsOn, 1)
	b.verifyReplay()
}

// A dispatch error names the caller's own field: a mission's depends_on shorthand is
// missions[i].depends_on[j], and edges[i] counts the caller's edges only (the shorthands used to
// be numbered as edges first, so both were reported as some edges[k]).
func TestDispatch_EdgeErrorsNameTheCallersField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a"}, {Key: "b", Title: "b", DependsOn: []string{"a", "nokey"}}}}, "t")
	require.ErrorIs(t, err, domain.ErrUnknownMission)
	require.Contains(t, err.Error(), "missions[1].depends_on[1]")
	_, err = b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a"}, {Key: "b", Title: "b", DependsOn: []string{"a"}}},
		Edges: []engine.EdgeSpec{{Mission: "a", DependsOn: "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"}}}, "t")
	require.ErrorIs(t, err, domain.ErrUnknownMission)
	require.Contains(t, err.Error(), "edges[0].depends_on")
}

// An escalation that only said a mission could not land yet (its target's checkout had local
// changes; the landing waited for approval) is closed when the mission lands: it stayed open,
// asking a person to act on something already done.
func TestLanding_ClosesItsWaitingEscalations(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.inState(domain.StateCompleted)
	other := b.inState(domain.StateCompleted)
	var ids []string
	for _, spec := range []engine.EscalationSpec{
		{MissionIDs: []string{m.ID}, Route: domain.RoutePerson, Kind: "checkout", Reason: "local changes", DecisionRequired: "commit or stash them"},
		{MissionIDs: []string{m.ID}, Route: domain.RouteMainAgent, Kind: "approval", Reason: "ready to land", DecisionRequired: "approve"},
		{MissionIDs: []string{m.ID}, Route: domain.RouteMainAgent, Kind: "report", Reason: "something else", DecisionRequired: "decide"},
		{MissionIDs: []string{other.ID}, Route: domain.RoutePerson, Kind: "checkout", Reason: "local changes", DecisionRequired: "commit or stash them"},
	} {
		e, err := b.e.Escalate(b.ctx, spec, "t")
		require.NoError(t, err)
		ids = append(ids, e.ID)
	}
	_, err := b.e.RecordLanding(b.ctx, domain.Landing{MissionID: m.ID, Attempt: m.Attempt, Status: "landed"}, domain.LandingLanded)
	require.NoError(t, err)
	open, err := b.e.Escalations(b.ctx, engine.EscalationFilter{State: domain.EscalationOpen})
	require.NoError(t, err)
	var still []string
	for _, e := range open {
		still = append(still, e.ID)
	}
	require.ElementsMatch(t, []string{ids[2], ids[3]}, still, "the checkout and approval reports of the landed mission are closed, nothing else")
	b.verifyReplay()
}

// A landing that stops waiting for the person's checkout some other way (the retry conflicts
// and a repair mission carries the work) closes the checkout escalation too; it stayed open
// after the mission had landed through the repair (found by a new-user trial). An approval
// escalation stays until the mission lands, and a landing still waiting keeps its escalation.
func TestLanding_CheckoutEscalationClosesWhenTheWaitEnds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.inState(domain.StateCompleted)
	waiting := b.inState(domain.StateCompleted)
	raise := func(id, kind string) string {
		e, err := b.e.Escalate(b.ctx, engine.EscalationSpec{MissionIDs: []string{id}, Route: domain.RoutePerson, Kind: kind,
			Reason: "cannot land yet", DecisionRequired: "act"}, "t")
		require.NoError(t, err)
		return e.ID
	}
	checkout, approval, stillWaiting := raise(m.ID, "checkout"), raise(m.ID, "approval"), raise(waiting.ID, "checkout")
	_, err := b.e.RecordLanding(b.ctx, domain.Landing{MissionID: waiting.ID, Attempt: waiting.Attempt, Status: "waiting_for_clean_checkout"}, domain.LandingWaiting)
	require.NoError(t, err)
	_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: m.ID, Attempt: m.Attempt, Status: "conflicted"}, domain.LandingRepair)
	require.NoError(t, err)
	openIDs := func() []string {
		open, err := b.e.Escalations(b.ctx, engine.EscalationFilter{State: domain.EscalationOpen})
		require.NoError(t, err)
		var ids []string
		for _, e := range open {
			ids = append(ids, e.ID)
		}
		return ids
	}
	require.ElementsMatch(t, []string{approval, stillWaiting}, openIDs(), "the checkout wait of %s ended", checkout)
	r := b.create(engine.MissionSpec{Title: "repair", Kind: domain.KindRepair, SubjectID: m.ID})
	r = b.acquire(r.ID, true)
	_, err = b.e.Complete(b.ctx, r.Fence(), domain.WorkerResult{Summary: "merged"})
	require.NoError(t, err)
	_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: r.ID, Attempt: r.Attempt, Status: "landed"}, domain.LandingLanded)
	require.NoError(t, err)
	_, err = b.e.CarryLanding(b.ctx, m.ID, r.ID)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{stillWaiting}, openIDs())
	b.verifyReplay()
}
