package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The hard-budget rule, one table: which budget a spend reached first, and its sentence.
func TestCheckSpend_FirstBudgetReached(t *testing.T) {
	t.Parallel()
	m := &domain.Mission{ID: "m-1", CostLimitUSD: 0.05}
	v := &domain.Voyage{ID: "v-1", CostLimitUSD: 0.10}
	for _, tc := range []struct {
		name string
		s    engine.Spend
		want string // Breach.Message, "" for none
	}{
		{"nothing spent", engine.Spend{Mission: m, Voyage: v}, ""},
		{"under every limit", engine.Spend{Mission: m, MissionSpent: domain.Usage{CostUSD: 0.0499}, Voyage: v, VoyageSpent: domain.Usage{CostUSD: 0.09}}, ""},
		{"mission reached", engine.Spend{Mission: m, MissionSpent: domain.Usage{CostUSD: 0.05}, Voyage: v},
			"mission m-1's cost budget crossed: spent $0.0500 of $0.0500; raise it (update_mission cost_limit_usd) or cancel"},
		{"voyage crossed", engine.Spend{Mission: m, MissionSpent: domain.Usage{CostUSD: 0.01}, Voyage: v, VoyageSpent: domain.Usage{CostUSD: 0.1234}},
			"voyage v-1's cost budget crossed: spent $0.1234 of $0.1000; raise it (update_voyage cost_limit_usd) or cancel"},
		{"no limits at all", engine.Spend{Mission: &domain.Mission{ID: "m-2"}, MissionSpent: domain.Usage{CostUSD: 99}}, ""},
		{"profile day dollars", engine.Spend{Mission: &domain.Mission{ID: "m-2"}, Profile: "claude", Day: "2026-12-01",
			Daily: engine.DailyBudget{CostUSD: 1}, DaySpent: domain.Usage{CostUSD: 1.5}},
			"profile claude's daily cost budget crossed: spent $1.5000 of $1.0000; raise it ([[profiles]] daily_cost_limit_usd in the configuration, or wait for the next day (2026-12-01 ends)) or cancel"},
		{"profile day tokens, cached input counts", engine.Spend{Mission: &domain.Mission{ID: "m-2"}, Profile: "codex", Day: "2026-12-01",
			Daily: engine.DailyBudget{Tokens: 1000}, DaySpent: domain.Usage{InputTokens: 990, CacheReadTokens: 900, OutputTokens: 10}},
			"profile codex's daily tokens budget crossed: spent 1000 tokens of 1000 tokens; raise it ([[profiles]] daily_token_limit in the configuration, or wait for the next day (2026-12-01 ends)) or cancel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := engine.CheckSpend(tc.s)
			if tc.want == "" {
				require.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			require.Equal(t, tc.want, got.Message())
		})
	}
}

// ReportUsage keeps the running spend of an attempt (cumulative: each report replaces the
// last), counts it with the mission's ended attempts, and names the budget it crosses; the
// crossing is recorded once. A failure of kind budget blocks the mission with an escalation
// showing the spend and the limit, spends no retry, and the running spend becomes the
// mission's and the voyage's.
func TestReportUsage_CrossingTheMissionBudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a/**"}, CostLimitUSD: 0.05}}}, "test")
	require.NoError(t, err)
	id := d.IDs["a"]
	m := b.acquire(id, true)
	report := func(cost float64, tokens int64) *engine.Breach {
		br, err := b.e.ReportUsage(b.ctx, engine.RunningUsage{MissionID: id, Epoch: m.Lease.Epoch, Profile: "claude",
			Usage: domain.Usage{InputTokens: tokens, OutputTokens: 1, CostUSD: cost}})
		require.NoError(t, err)
		return br
	}
	require.Nil(t, report(0.02, 100))
	require.Nil(t, report(0.04, 200), "cumulative: 0.04, not 0.06")
	br := report(0.06, 300)
	require.NotNil(t, br)
	require.Equal(t, engine.Breach{Scope: engine.ScopeMission, Subject: id, Measure: engine.MeasureCost, Spent: 0.06, Limit: 0.05}, *br)
	require.NotNil(t, report(0.07, 400), "still crossed")
	evs, err := b.e.Events(b.ctx, engine.EventFilter{MissionID: id, Types: []string{"budget.crossed"}, Limit: 10})
	require.NoError(t, err)
	require.Len(t, evs, 1, "the crossing is recorded once per attempt")

	run, err := b.e.RunningUsageOf(b.ctx, id)
	require.NoError(t, err)
	require.Equal(t, domain.Usage{InputTokens: 400, OutputTokens: 1, CostUSD: 0.07}, run.Usage)

	out, err := b.e.Fail(b.ctx, m.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureBudget, Tool: "budget", Summary: br.Message()}})
	require.NoError(t, err)
	require.Equal(t, domain.StateBlocked, out.State)
	require.Equal(t, 0, out.AttemptsUsed, "no retry spent")
	require.Equal(t, domain.Usage{InputTokens: 400, OutputTokens: 1, CostUSD: 0.07}, out.Usage, "the agent reported no final usage: its running spend counts")
	got, err := b.e.GetMission(b.ctx, id)
	require.NoError(t, err)
	require.NotNil(t, got.Escalation)
	require.Equal(t, "budget", got.Escalation.Kind)
	require.Contains(t, got.Escalation.Reason, "spent $0.0600 of $0.0500")
	require.Equal(t, "raise mission "+id+"'s cost limit (update_mission cost_limit_usd) above what was spent: the mission then resumes by itself and this escalation closes; or cancel the mission",
		got.Escalation.DecisionRequired, "only the limit crossed is named: its voyage's is not")
	require.NotContains(t, got.Escalation.SafeNextStep, "resolve_escalation", "raising the limit resumes it: nobody resolves the escalation")
	v, err := b.e.Voyage(b.ctx, d.Voyage.ID)
	require.NoError(t, err)
	require.Equal(t, 0.07, v.Usage.CostUSD)
	_, err = b.e.RunningUsageOf(b.ctx, id)
	require.ErrorIs(t, err, domain.ErrNotFound, "the attempt ended: its running spend is the mission's now")
	b.verifyReplay()
}

// A stale agent's report is refused by the epoch; a negative one names the field.
func TestReportUsage_FencedAndChecked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "a", WriteArea: []string{"a/**"}})
	run := b.acquire(m.ID, true)
	_, err := b.e.ReportUsage(b.ctx, engine.RunningUsage{MissionID: m.ID, Epoch: run.Lease.Epoch + 1, Usage: domain.Usage{InputTokens: 1}})
	require.ErrorIs(t, err, domain.ErrLeaseLost)
	_, err = b.e.ReportUsage(b.ctx, engine.RunningUsage{MissionID: m.ID, Epoch: run.Lease.Epoch, Usage: domain.Usage{InputTokens: -1}})
	require.ErrorContains(t, err, "usage")
}

// The profile's daily cap counts what the profile spent that day (ended attempts, kept in
// spend_daily, surviving a new engine on the same file) plus its attempts in flight.
func TestReportUsage_ProfileDailyCapSurvivesARestart(t *testing.T) {
	t.Parallel()
	caps := func(o *engine.Options) {
		o.Budgets = engine.Budgets{Profiles: map[string]engine.DailyBudget{"claude": {CostUSD: 0.10}}}
	}
	b := setup(t, caps)
	first := b.create(engine.MissionSpec{Title: "first", WriteArea: []string{"a/**"}})
	m, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "claude", MissionID: first.ID, Start: true})
	require.NoError(t, err)
	require.Equal(t, "claude", m.Profile)
	_, err = b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "done", Usage: &domain.Usage{InputTokens: 10, CostUSD: 0.08}})
	require.NoError(t, err)

	b.e = engine.New(b.st, engine.Options{Clock: b.clock, DefaultRepository: "/repo", Budgets: caps0()})
	second := b.create(engine.MissionSpec{Title: "second", WriteArea: []string{"b/**"}})
	m2, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "claude", MissionID: second.ID, Start: true})
	require.NoError(t, err)
	br, err := b.e.ReportUsage(b.ctx, engine.RunningUsage{MissionID: second.ID, Epoch: m2.Lease.Epoch, Profile: "claude", Usage: domain.Usage{CostUSD: 0.01}})
	require.NoError(t, err)
	require.Nil(t, br, "0.09 of 0.10")
	br, err = b.e.ReportUsage(b.ctx, engine.RunningUsage{MissionID: second.ID, Epoch: m2.Lease.Epoch, Profile: "claude", Usage: domain.Usage{CostUSD: 0.03}})
	require.NoError(t, err)
	require.NotNil(t, br)
	require.Equal(t, engine.ScopeProfile, br.Scope)
	require.InDelta(t, 0.11, br.Spent, 1e-9)
	require.Equal(t, engine.DayKey(t0, nil), br.Day)

	b.clock.Advance(24 * time.Hour) // the next day counts afresh
	br, err = b.e.ReportUsage(b.ctx, engine.RunningUsage{MissionID: second.ID, Epoch: m2.Lease.Epoch, Profile: "claude", Usage: domain.Usage{CostUSD: 0.03}})
	require.NoError(t, err)
	require.Nil(t, br)
}

func caps0() engine.Budgets {
	return engine.Budgets{Profiles: map[string]engine.DailyBudget{"claude": {CostUSD: 0.10}}}
}

// Raising the limit that a budget failure named is the decision its escalation asked for: the
// mission goes back to pending and the escalation is resolved; a limit still under the spend
// leaves it blocked.
func TestBudgetBlocked_RaisingTheLimitResumes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", CostLimitUSD: 0.05, Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a/**"}}}}, "test")
	require.NoError(t, err)
	id := d.IDs["a"]
	m := b.acquire(id, true)
	br, err := b.e.ReportUsage(b.ctx, engine.RunningUsage{MissionID: id, Epoch: m.Lease.Epoch, Usage: domain.Usage{InputTokens: 10, CostUSD: 0.06}})
	require.NoError(t, err)
	require.Equal(t, engine.ScopeVoyage, br.Scope)
	_, err = b.e.Fail(b.ctx, m.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureBudget, Summary: br.Message()}})
	require.NoError(t, err)
	blocked := b.get(id)
	require.Equal(t, domain.StateBlocked, blocked.State)
	open, err := b.e.Escalations(b.ctx, engine.EscalationFilter{MissionID: id, Limit: 10})
	require.NoError(t, err)
	require.Len(t, open, 1)
	require.Equal(t, "raise voyage "+d.Voyage.ID+"'s cost limit (update_voyage cost_limit_usd) above what was spent: the mission then resumes by itself and this escalation closes; or cancel the mission",
		open[0].DecisionRequired, "the voyage's limit was crossed, the mission has none")

	still := 0.06
	_, err = b.e.UpdateVoyage(b.ctx, d.Voyage.ID, engine.VoyagePatch{CostLimitUSD: &still}, "person")
	require.NoError(t, err)
	require.Equal(t, domain.StateBlocked, b.get(id).State, "0.06 of 0.06 is still spent")

	raised := 1.0
	_, err = b.e.UpdateVoyage(b.ctx, d.Voyage.ID, engine.VoyagePatch{CostLimitUSD: &raised}, "person")
	require.NoError(t, err)
	got, err := b.e.GetMission(b.ctx, id)
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, got.Mission.State)
	require.Equal(t, 0, got.Mission.AttemptsUsed)
	esc, err := b.e.Escalations(b.ctx, engine.EscalationFilter{MissionID: id, Limit: 10})
	require.NoError(t, err)
	require.Len(t, esc, 1)
	require.Equal(t, domain.EscalationResolved, esc[0].State)
	b.verifyReplay()
}

// get_mission shows the running spend of the attempt in flight, and says which profile
// reported no usage at all instead of showing a silent zero.
func TestGetMission_RunningUsageAndSilentProfile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "a", WriteArea: []string{"a/**"}})
	run, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "scripted", MissionID: m.ID, Start: true})
	require.NoError(t, err)
	_, err = b.e.ReportUsage(b.ctx, engine.RunningUsage{MissionID: m.ID, Epoch: run.Lease.Epoch, Usage: domain.Usage{InputTokens: 42}})
	require.NoError(t, err)
	d, err := b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, &domain.Usage{InputTokens: 42}, d.RunningUsage)
	require.Empty(t, d.UsageNote)

	other := b.create(engine.MissionSpec{Title: "b", WriteArea: []string{"b/**"}})
	run2, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "shell", MissionID: other.ID, Start: true})
	require.NoError(t, err)
	_, err = b.e.Complete(b.ctx, run2.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)
	d, err = b.e.GetMission(b.ctx, other.ID)
	require.NoError(t, err)
	require.Nil(t, d.RunningUsage)
	require.Equal(t, "usage: not reported by profile shell (budgets in tokens and dollars cannot act on it; wall time still does)", d.UsageNote)
}
