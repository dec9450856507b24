package planner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// A profile whose daily budget is spent gets no new work: the mission goes to another profile
// that can take it, and when none can, it is held with code budget and the profile's sentence.
func TestCompute_ProfileDayBudgetHold(t *testing.T) {
	t.Parallel()
	m := mission(1)
	profiles := []planner.Profile{{Name: "claude", Confidence: 1, MaxConcurrency: 2}, {Name: "codex", Confidence: 0.5, MaxConcurrency: 2}}
	spent := engine.Reason{Code: engine.WhyBudget, Message: "profile claude's daily cost budget is spent ($1.0000 of $1.0000): nothing more starts until it is raised (…)"}

	p := planner.Compute(snap([]domain.Mission{m}), t0, lim, profiles)
	require.Len(t, p.Dispatch, 1)
	require.Equal(t, "claude", p.Dispatch[0].Profile, "the better profile, while it has budget")

	s := snap([]domain.Mission{m})
	s.ProfileHolds = map[string]engine.Reason{"claude": spent}
	p = planner.Compute(s, t0, lim, profiles)
	require.Len(t, p.Dispatch, 1)
	require.Equal(t, "codex", p.Dispatch[0].Profile, "another profile takes it")

	p = planner.Compute(s, t0, lim, profiles[:1])
	require.Empty(t, p.Dispatch)
	r := hold(t, p, "m01")
	require.Equal(t, engine.WhyBudget, r.Code)
	require.Equal(t, spent.Message, r.Message)
}
