package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Token limits are budgets of the same rule and sentence as cost limits: input (cached
// included) plus output tokens, the mission's after its cost, the voyage's after its cost.
func TestCheckSpend_TokenLimits(t *testing.T) {
	t.Parallel()
	m := &domain.Mission{ID: "m-1", CostLimitUSD: 1}
	v := &domain.Voyage{ID: "v-1", TokenLimit: 1000}
	br := engine.CheckSpend(engine.Spend{Mission: m, MissionTokens: 500, MissionSpent: domain.Usage{InputTokens: 450, CacheReadTokens: 400, OutputTokens: 50}})
	require.NotNil(t, br)
	require.Equal(t, "mission m-1's tokens budget crossed: spent 500 tokens of 500 tokens; raise it (update_mission token_limit) or cancel", br.Message())
	require.Nil(t, engine.CheckSpend(engine.Spend{Mission: m, MissionTokens: 500, MissionSpent: domain.Usage{InputTokens: 499}}))
	br = engine.CheckSpend(engine.Spend{Mission: m, MissionTokens: 5000, MissionSpent: domain.Usage{InputTokens: 10}, Voyage: v, VoyageSpent: domain.Usage{InputTokens: 990, OutputTokens: 20}})
	require.NotNil(t, br)
	require.Equal(t, "voyage v-1's tokens budget crossed: spent 1010 tokens of 1000 tokens; raise it (update_voyage token_limit) or cancel", br.Message())
	require.Equal(t, "voyage v-1's tokens budget is spent (1010 tokens of 1000 tokens): nothing more starts until it is raised (update_voyage token_limit)", br.HoldMessage())
	br = engine.CheckSpend(engine.Spend{Mission: m, MissionTokens: 10, MissionSpent: domain.Usage{InputTokens: 10, CostUSD: 2}})
	require.Equal(t, engine.MeasureCost, br.Measure, "the mission's dollars come first")
}

// A mission's token limit is stored with create_mission (read apart from its row), shown by
// get_mission, crossed by a running report like a cost limit (a budget failure blocks it with
// an escalation, no retry spent), and raising it with update_mission resumes the mission; a
// negative one names the field and stores nothing.
func TestTokenLimit_MissionCrossedAndRaised(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.e.CreateMission(b.ctx, engine.MissionSpec{Title: "bad", WriteArea: []string{"x/**"}, TokenLimit: -1}, "test")
	require.ErrorContains(t, err, "token_limit")
	m := b.create(engine.MissionSpec{Title: "a", WriteArea: []string{"a/**"}, TokenLimit: 250})
	d, err := b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, int64(250), d.TokenLimit)
	run := b.acquire(m.ID, true)
	br, err := b.e.ReportUsage(b.ctx, engine.RunningUsage{MissionID: m.ID, Epoch: run.Lease.Epoch, Usage: domain.Usage{InputTokens: 200, OutputTokens: 49}})
	require.NoError(t, err)
	require.Nil(t, br, "249 of 250")
	br, err = b.e.ReportUsage(b.ctx, engine.RunningUsage{MissionID: m.ID, Epoch: run.Lease.Epoch, Usage: domain.Usage{InputTokens: 290, OutputTokens: 10}})
	require.NoError(t, err)
	require.Equal(t, &engine.Breach{Scope: engine.ScopeMission, Subject: m.ID, Measure: engine.MeasureToken, Spent: 300, Limit: 250}, br)
	out, err := b.e.Fail(b.ctx, run.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureBudget, Tool: "budget", Summary: br.Message()}})
	require.NoError(t, err)
	require.Equal(t, domain.StateBlocked, out.State)
	require.Equal(t, 0, out.AttemptsUsed, "no retry spent")
	d, err = b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.NotNil(t, d.Escalation)
	require.Contains(t, d.Escalation.DecisionRequired, "raise mission "+m.ID+"'s token limit (update_mission token_limit)")

	_, err = b.e.UpdateMission(b.ctx, m.ID, engine.MissionPatch{TokenLimit: ptr(int64(-5))}, "person")
	require.ErrorContains(t, err, "token_limit")
	_, err = b.e.UpdateMission(b.ctx, m.ID, engine.MissionPatch{TokenLimit: ptr(int64(300))}, "person")
	require.NoError(t, err)
	require.Equal(t, domain.StateBlocked, b.get(m.ID).State, "300 of 300 is still spent")
	got, err := b.e.UpdateMission(b.ctx, m.ID, engine.MissionPatch{TokenLimit: ptr(int64(1000))}, "person")
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, got.State, "raising the limit resumes it")
	d, err = b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, int64(1000), d.TokenLimit)
	esc, err := b.e.Escalations(b.ctx, engine.EscalationFilter{MissionID: m.ID, Limit: 10})
	require.NoError(t, err)
	require.Len(t, esc, 1)
	require.Equal(t, "budget", esc[0].Kind)
	require.Equal(t, domain.EscalationResolved, esc[0].State)
	b.verifyReplay()
}

// A voyage's token limit, set at dispatch and raised with update_voyage: once its missions
// spent it, the rest of the voyage is held with the one sentence of a spent budget, and
// raising it lets them start.
func TestTokenLimit_VoyageHoldsTheRest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "bad", TokenLimit: -1, Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a/**"}}}}, "test")
	require.ErrorContains(t, err, "token_limit")
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", TokenLimit: 100, Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a/**"}}, {Key: "b", Title: "b", WriteArea: []string{"b/**"}}}}, "test")
	require.NoError(t, err)
	require.Equal(t, int64(100), d.Voyage.TokenLimit)
	run := b.acquire(d.IDs["a"], true)
	_, err = b.e.Complete(b.ctx, run.Fence(), domain.WorkerResult{Summary: "done", Usage: &domain.Usage{InputTokens: 90, OutputTokens: 10}})
	require.NoError(t, err)
	v, err := b.e.Voyage(b.ctx, d.Voyage.ID)
	require.NoError(t, err)
	require.Equal(t, int64(100), v.TokenLimit)
	hold := engine.VoyageHold(&v, ptr(b.get(d.IDs["b"])), 0)
	require.NotNil(t, hold)
	require.Equal(t, engine.WhyBudget, hold.Code)
	require.Equal(t, "voyage "+d.Voyage.ID+"'s tokens budget is spent (100 tokens of 100 tokens): nothing more starts until it is raised (update_voyage token_limit)", hold.Message)

	raised, err := b.e.UpdateVoyage(b.ctx, d.Voyage.ID, engine.VoyagePatch{TokenLimit: ptr(int64(500))}, "person")
	require.NoError(t, err)
	require.Equal(t, int64(500), raised.TokenLimit)
	require.Nil(t, engine.VoyageHold(&raised, ptr(b.get(d.IDs["b"])), 0))
	b.verifyReplay()
}

func ptr[T any](v T) *T { return &v }

// A mission that spent past its token limit on attempt 1 and is retried anyway (retry_mission)
// does not start attempt 2, neither by a pull-mode claim nor by the planner (its planning view
// carries the limit): it waits with the budget hold and CheckSpend's sentence. Raising the
// limit lets it start.
func TestTokenLimit_RetriedMissionWaitsUntilRaised(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "a", WriteArea: []string{"a/**"}, TokenLimit: 250})
	run := b.acquire(m.ID, true)
	out, err := b.e.Fail(b.ctx, run.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureTest, Summary: "tests fail"},
		Usage: &domain.Usage{InputTokens: 200, OutputTokens: 60}})
	require.NoError(t, err)
	require.Equal(t, domain.StateBlocked, out.State, "a failure past the mission's token limit blocks, it is not retried")
	hold := "mission " + m.ID + "'s tokens budget is spent (260 tokens of 250 tokens): nothing more starts until it is raised (update_mission token_limit)"
	require.Equal(t, "mission "+m.ID+"'s tokens budget crossed: spent 260 tokens of 250 tokens; raise it (update_mission token_limit) or cancel", out.Decision.Reason,
		"the budget rule's sentence (Breach.Message)")

	_, err = b.e.Retry(b.ctx, m.ID, "person")
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, b.get(m.ID).State)
	_, err = b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "puller", Start: true})
	require.ErrorIs(t, err, domain.ErrNoWork, "a pull-mode claim passes over it")
	d, err := b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, 1, d.Mission.Attempt, "attempt 2 did not start")
	require.NotEmpty(t, d.WhyNotRunning)
	require.Equal(t, engine.Reason{Code: engine.WhyBudget, Message: hold}, d.WhyNotRunning[0])
	view, err := b.e.PlanningView(b.ctx, 50, b.clock.Now())
	require.NoError(t, err)
	require.Equal(t, int64(250), view.TokenLimits[m.ID], "the planner sees the limit")
	require.Equal(t, &engine.Reason{Code: engine.WhyBudget, Message: hold}, engine.VoyageHold(nil, &view.Candidates[0], view.TokenLimits[m.ID]))

	_, err = b.e.UpdateMission(b.ctx, m.ID, engine.MissionPatch{TokenLimit: ptr(int64(1000))}, "person")
	require.NoError(t, err)
	got, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "puller", Start: true})
	require.NoError(t, err)
	require.Equal(t, m.ID, got.ID)
	require.Equal(t, 2, got.Attempt)
	b.verifyReplay()
}

// Resolving a budget escalation with retry while the budget is still spent is refused with
// the budget rule's sentence (the retried mission would only be blocked again by the same
// escalation); once the limit is raised, the same retry is accepted.
func TestTokenLimit_RetryOfASpentBudgetIsRefusedUntilRaised(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "a", WriteArea: []string{"a/**"}, TokenLimit: 250})
	run := b.acquire(m.ID, true)
	out, err := b.e.Fail(b.ctx, run.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureTest, Summary: "tests fail"},
		Usage: &domain.Usage{InputTokens: 200, OutputTokens: 60}})
	require.NoError(t, err)
	require.Equal(t, domain.StateBlocked, out.State)
	require.NotEmpty(t, out.EscalationID)

	_, err = b.e.ResolveEscalation(b.ctx, out.EscalationID, engine.ResolveRetry, "", "person")
	require.Error(t, err)
	require.Contains(t, err.Error(), "retry of "+m.ID+" would start against a spent budget: mission "+m.ID+"'s tokens budget is spent (260 tokens of 250 tokens)")
	require.Equal(t, domain.StateBlocked, b.get(m.ID).State, "the refused retry changed nothing")
	require.Equal(t, out.EscalationID, b.get(m.ID).EscalationID)

	_, err = b.e.UpdateMission(b.ctx, m.ID, engine.MissionPatch{TokenLimit: ptr(int64(1000))}, "person")
	require.NoError(t, err)
	if st := b.get(m.ID); st.State == domain.StateBlocked { // raising may have resumed it already
		_, err = b.e.ResolveEscalation(b.ctx, out.EscalationID, engine.ResolveRetry, "", "person")
		require.NoError(t, err)
	}
	require.Equal(t, domain.StatePending, b.get(m.ID).State)
	b.verifyReplay()
}

// A mission that waits for its upstream while its voyage's budget is spent says both: the
// dependency first, then the budget that will hold it once the upstream is done.
func TestTokenLimit_WaitingMissionAlsoNamesTheSpentBudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", TokenLimit: 100, Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a/**"}},
		{Key: "c", Title: "c", WriteArea: []string{"c/**"}, DependsOn: []string{"a"}}}}, "test")
	require.NoError(t, err)
	run := b.acquire(d.IDs["a"], true)
	_, err = b.e.Complete(b.ctx, run.Fence(), domain.WorkerResult{Summary: "done", Usage: &domain.Usage{InputTokens: 90, OutputTokens: 10}})
	require.NoError(t, err)
	got, err := b.e.GetMission(b.ctx, d.IDs["c"])
	require.NoError(t, err)
	var codes []string
	for _, r := range got.WhyNotRunning {
		codes = append(codes, r.Code)
	}
	require.Equal(t, []string{engine.WhyHardDep, engine.WhyBudget}, codes, "%+v", got.WhyNotRunning)
	require.Contains(t, got.WhyNotRunning[1].Message, "voyage "+d.Voyage.ID+"'s tokens budget is spent")
}

// While another mission runs alone in the repository, a mission of a spent voyage says the
// budget first and the busy repository after it: once the repository is free it still waits
// for the budget, and the planner holds it for the budget too (found by issue 15's fresh-user
// trial, where voyages show listed repository_busy for the missions a spent budget held).
func TestTokenLimit_SpentBudgetIsSaidBeforeABusyRepository(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", TokenLimit: 100, Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a/**"}},
		{Key: "c", Title: "c", WriteArea: []string{"c/**"}}}}, "test")
	require.NoError(t, err)
	run := b.acquire(d.IDs["a"], true)
	_, err = b.e.Complete(b.ctx, run.Fence(), domain.WorkerResult{Summary: "done", Usage: &domain.Usage{InputTokens: 90, OutputTokens: 10}})
	require.NoError(t, err)
	serial := b.create(engine.MissionSpec{Title: "alone"})
	b.acquire(serial.ID, true)
	got, err := b.e.GetMission(b.ctx, d.IDs["c"])
	require.NoError(t, err)
	var codes []string
	for _, r := range got.WhyNotRunning {
		codes = append(codes, r.Code)
	}
	require.Equal(t, []string{engine.WhyBudget, engine.WhyExclusive}, codes, "%+v", got.WhyNotRunning)
	require.Contains(t, got.WhyNotRunning[0].Message, "voyage "+d.Voyage.ID+"'s tokens budget is spent")
}
