package e2e

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// TestRealClaude_ProfileDailyCapStopsTheAgentAndHoldsTheProfile is issue 15's daily cap with
// the real Claude Code: a looping session of a profile whose day is capped at $0.25 (priced
// at $1 per million input tokens: $0.10 a turn) is stopped once its running spend crosses
// the cap: the attempt fails with kind budget naming the profile's day, the mission blocks
// with a budget escalation that says how to raise the cap, no retry is spent, and a new
// mission that only this profile can take waits with the profile's sentence instead of
// starting.
func TestRealClaude_ProfileDailyCapStopsTheAgentAndHoldsTheProfile(t *testing.T) {
	srv := modelserver.Start(t)
	var loop atomic.Bool
	loopID := newLaterID(t)
	loop.Store(true)
	srv.Script(spendingScript(loopID, &loop, modelserver.WriteFile("b.txt", "b\n", perTurn)))
	prices := func(c *scheduler.Config) { c.Prices = engine.Prices{{Model: "*", Input: 1, Output: 1}} }
	h := newLoopHarnessWith(t, []agent.Profile{claudeProfile(t, srv)}, prices, "ANTHROPIC_API_KEY="+apiKey)
	// What serve and daemon make of [[profiles]] daily_cost_limit_usd = 0.25 (and what a
	// SIGHUP reload puts in force): the engine's budgets.
	h.eng.SetBudgets(engine.Budgets{Profiles: map[string]engine.DailyBudget{"claude": {CostUSD: 0.25}}, Day: time.UTC})
	a := createMission(h, engine.MissionSpec{Title: "loops", Brief: "Write a.txt, step by step.", WriteArea: []string{"a.txt"}})
	loopID.set(a)

	h.until("the looping mission is blocked", func() bool { return h.mission(a).Mission.State == domain.StateBlocked })
	m := h.mission(a)
	require.Len(t, m.Attempts, 1, dumpMissions(h.ctx, h.eng))
	at := m.Attempts[0]
	require.Equal(t, domain.OutcomeFailed, at.Outcome)
	require.Equal(t, domain.FailureBudget, at.Failure.Kind)
	require.Contains(t, at.Failure.Summary, "profile claude's daily cost budget crossed: spent $0.3")
	require.Contains(t, at.Failure.Summary, "of $0.2500")
	require.Equal(t, 0, m.Mission.AttemptsUsed, "no retry spent")
	require.NotNil(t, m.Escalation)
	require.Equal(t, "budget", m.Escalation.Kind)
	require.Contains(t, m.Escalation.Reason, "profile claude's daily cost budget crossed")
	require.Contains(t, m.Escalation.DecisionRequired, "daily_cost_limit_usd")
	require.Less(t, len(srv.ModelRequests(modelserver.Anthropic)), 15, "stopped soon after crossing, not by the hard timeout (the script loops for ever)")

	b := createMission(h, engine.MissionSpec{Title: "after the cap", Brief: "Create b.txt at the top of the repository.", WriteArea: []string{"b.txt"}})
	var why engine.Reason
	h.until("the new mission is held by the profile's spent day", func() bool {
		for _, r := range h.mission(b).WhyNotRunning {
			if r.Code == engine.WhyBudget {
				why = r
				return true
			}
		}
		return false
	})
	require.Contains(t, why.Message, "profile claude's daily cost budget is spent ($0.3")
	require.Contains(t, why.Message, "daily_cost_limit_usd")
	d := h.mission(b)
	require.Equal(t, domain.StatePending, d.Mission.State)
	require.Empty(t, d.Attempts, "the profile took no new work once its day was spent")
}

// createMission creates a mission in the harness's repository and wakes the loop.
func createMission(h *loopHarness, spec engine.MissionSpec) string {
	h.t.Helper()
	c, err := h.eng.CreateMission(h.ctx, spec, "test")
	require.NoError(h.t, err)
	h.s.Wake()
	return c.Mission.ID
}
