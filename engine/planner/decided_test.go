package planner_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// Found by issue 15's fresh-user trial: a mission held by its voyage's spent budget flipped to
// repository_busy while an unrelated mission without a write area ran alone in the
// repository, and back to budget when it ended — a second mission.held event, a second
// mission.budget_hold notification for one wait, and a reason that hid the decision the
// mission waits for. A budget or rate-limit hold now stays while such a passing blocker also
// applies; a mission that was not held for them yet still says the blocker, and once the
// budget or the window no longer holds it the blocker is said.
func TestCompute_BudgetOrRateHoldStaysWhileAPassingBlockerApplies(t *testing.T) {
	t.Parallel()
	spentVoyage := domain.Voyage{ID: "v1", CostLimitUSD: 0.05, Usage: domain.Usage{CostUSD: 0.06}}
	serial := mission(9, exclusive, running("gen"))
	budgetHold := func(s planner.Snapshot) planner.Snapshot {
		s.Holds = map[string]engine.Hold{"m01": {MissionID: "m01", Reason: engine.Reason{Code: engine.WhyBudget, Message: "spent"}}}
		return s
	}
	withVoyage := func(v domain.Voyage) planner.Snapshot {
		s := snap([]domain.Mission{mission(1, voyage("v1"))}, serial)
		s.Voyages = map[string]domain.Voyage{"v1": v}
		return s
	}

	p := planner.Compute(withVoyage(spentVoyage), t0, lim, []planner.Profile{gen})
	require.Equal(t, engine.WhyExclusive, hold(t, p, "m01").Code, "not held for the budget before: the blocker is said first, as always")

	p = planner.Compute(budgetHold(withVoyage(spentVoyage)), t0, lim, []planner.Profile{gen})
	r := hold(t, p, "m01")
	require.Equal(t, engine.WhyBudget, r.Code, "held for the budget before: it stays")
	require.Equal(t, "voyage v1's cost budget is spent ($0.0600 of $0.0500): nothing more starts until it is raised (update_voyage cost_limit_usd)", r.Message)

	raised := spentVoyage
	raised.CostLimitUSD = 1
	p = planner.Compute(budgetHold(withVoyage(raised)), t0, lim, []planner.Profile{gen})
	require.Equal(t, engine.WhyExclusive, hold(t, p, "m01").Code, "the budget raised: the blocker is what holds it now")

	// A profile's spent day, the same way.
	s := budgetHold(snap([]domain.Mission{mission(1)}, serial))
	s.ProfileHolds = map[string]engine.Reason{"gen": {Code: engine.WhyBudget, Message: "profile gen's daily cost budget is spent"}}
	require.Equal(t, "profile gen's daily cost budget is spent", hold(t, planner.Compute(s, t0, lim, []planner.Profile{gen}), "m01").Message)
	other := planner.Profile{Name: "other", Confidence: 0.5, MaxConcurrency: 2}
	require.Equal(t, engine.WhyExclusive, hold(t, planner.Compute(s, t0, lim, []planner.Profile{gen, other}), "m01").Code,
		"another profile with budget left could take it: the blocker holds it")

	// A rate-limited profile, the same way.
	s = snap([]domain.Mission{mission(1)}, serial)
	s.RateWindows = map[string]engine.RateWindow{"gen": paused("gen", t0.Add(30*time.Second))}
	require.Equal(t, engine.WhyExclusive, hold(t, planner.Compute(s, t0, lim, []planner.Profile{gen}), "m01").Code)
	s.Holds = map[string]engine.Hold{"m01": {MissionID: "m01", Reason: engine.Reason{Code: engine.WhyRateLimited}}}
	r = hold(t, planner.Compute(s, t0, lim, []planner.Profile{gen}), "m01")
	require.Equal(t, engine.WhyRateLimited, r.Code)
	require.Equal(t, t0.Add(30*time.Second), r.Until)
	require.Equal(t, engine.WhyExclusive, hold(t, planner.Compute(s, t0.Add(31*time.Second), lim, []planner.Profile{gen}), "m01").Code,
		"the window ended: the blocker holds it")

	// A blocker that needs a decision of its own is said as before.
	s = budgetHold(withVoyage(spentVoyage))
	s.Missions[0].State = domain.StateBlocked
	require.Equal(t, engine.WhyState, hold(t, planner.Compute(s, t0, lim, []planner.Profile{gen}), "m01").Code)
}
