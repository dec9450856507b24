package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// Model choice per profile (design brief §3, model policy): scheduler_forced runs exactly its
// model on a profile that offers it; agent_select keeps the profile's models the mission
// allows; a reviewer avoids the model its subject ran when it can.
func TestChooseModel(t *testing.T) {
	forced := domain.ModelPolicy{Mode: domain.ModeSchedulerForced, Model: "opus"}
	sel := domain.ModelPolicy{Mode: domain.ModeAgentSelect, Allowed: []string{"haiku", "sonnet"}}
	cases := []struct {
		name   string
		pol    domain.ModelPolicy
		models []string
		avoid  string
		want   string
		ok     bool
	}{
		{"forced, offered", forced, []string{"sonnet", "opus"}, "", "opus", true},
		{"forced, not offered", forced, []string{"sonnet"}, "", "", false},
		{"forced, profile lists none: runs it", forced, nil, "", "opus", true},
		{"select within allowed", sel, []string{"opus", "sonnet"}, "", "sonnet", true},
		{"select, nothing allowed offered", sel, []string{"opus"}, "", "", false},
		{"select, profile lists none: the allowed", sel, nil, "", "haiku", true},
		{"default: the profile's first", domain.ModelPolicy{}, []string{"a", "b"}, "", "a", true},
		{"reviewer avoids its subject's model", domain.ModelPolicy{}, []string{"a", "b"}, "a", "b", true},
		{"only the subject's model: still runs", domain.ModelPolicy{}, []string{"a"}, "a", "a", true},
		{"no models anywhere: the CLI's default", domain.ModelPolicy{}, nil, "", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := domain.Mission{ModelPolicy: c.pol}
			got, ok := scheduler.ChooseModel(&m, agent.Profile{Name: "p", Models: c.models}, c.avoid)
			require.Equal(t, c.ok, ok)
			if ok {
				require.Equal(t, c.want, got)
			}
		})
	}
}

// Confidence from history: the declared prior with no history, moving towards the observed
// success rate as attempts accumulate (smoothed with a weight of 2 prior attempts).
func TestConfidenceFromHistory(t *testing.T) {
	p := agent.Profile{Name: "p", Confidence: 0.5}
	require.InDelta(t, 0.5, scheduler.Confidence(p, "implementer", 0, 0), 1e-9, "no history: the prior")
	require.InDelta(t, (8+1)/10.0, scheduler.Confidence(p, "implementer", 8, 8), 1e-9)
	require.InDelta(t, (0+1)/10.0, scheduler.Confidence(p, "implementer", 8, 0), 1e-9)
	require.Greater(t, scheduler.Confidence(p, "x", 100, 100), 0.98)
}
