package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// A budget failure that crossed none of the mission's or its voyage's limits (the agent said
// so itself, or a profile's daily cap) cannot resume by a raised limit: its escalation asks
// for the cap or the next day, then a retry.
func TestBudgetDecision_NoOwnLimitAsksForARetry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "a", WriteArea: []string{"a/**"}})
	run := b.acquire(m.ID, true)
	_, err := b.e.Fail(b.ctx, run.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureBudget, Summary: "profile claude's daily cost budget crossed"}})
	require.NoError(t, err)
	d, err := b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StateBlocked, d.Mission.State)
	require.NotNil(t, d.Escalation)
	require.Contains(t, d.Escalation.DecisionRequired, "[[profiles]] daily_cost_limit_usd or daily_token_limit in the configuration, or wait for the next day), then resolve_escalation with action retry")
	require.NotContains(t, d.Escalation.DecisionRequired, "update_voyage", "a mission without a voyage")
	require.Equal(t, "resolve_escalation with action retry once fixed", d.Escalation.SafeNextStep)
}
