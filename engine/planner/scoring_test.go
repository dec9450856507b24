package planner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// The assignment rules of design brief §3 and of Armada's persona routing
// (shared/cases/armada-scheduling.md), as pure functions: hard filters (capabilities, allowed
// personas), the preferred persona, the fallback to any eligible candidate, the score and its
// breakdown, and determinism.

func TestEligible_HardFilters(t *testing.T) {
	cases := []struct {
		name string
		m    domain.Mission
		c    planner.Candidate
		want bool
	}{
		{"no needs, any candidate", domain.Mission{}, planner.Candidate{}, true},
		{"capability offered", domain.Mission{Capabilities: []string{"go"}}, planner.Candidate{Capabilities: []string{"go", "sql"}}, true},
		{"capability missing", domain.Mission{Capabilities: []string{"go", "gpu"}}, planner.Candidate{Capabilities: []string{"go"}}, false},
		{"candidate offers nothing", domain.Mission{Capabilities: []string{"go"}}, planner.Candidate{}, false},
		{"persona allowed", domain.Mission{Persona: "reviewer"}, planner.Candidate{Personas: []string{"implementer", "reviewer"}}, true},
		{"persona not allowed", domain.Mission{Persona: "architect"}, planner.Candidate{Personas: []string{"implementer"}}, false},
		{"no allowed list: any role", domain.Mission{Persona: "architect"}, planner.Candidate{}, true},
		{"mission without persona fits a restricted candidate", domain.Mission{}, planner.Candidate{Personas: []string{"reviewer"}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, planner.Eligible(&c.m, c.c))
		})
	}
}

func TestScoreCandidate_Breakdown(t *testing.T) {
	m := domain.Mission{Priority: 40, Capabilities: []string{"go"}, Persona: "implementer"}
	s := planner.ScoreCandidate(&m, planner.Candidate{Name: "p", Capabilities: []string{"go", "sql", "js", "css"},
		Load: 0.5, Confidence: 0.8, PreferredPersona: "implementer"})
	require.Equal(t, "p", s.Profile)
	require.InDelta(t, 0.25, s.CapabilityOverlap, 1e-9, "1 asked of 4 offered")
	require.InDelta(t, 0.5, s.Load, 1e-9)
	require.InDelta(t, 0.8, s.Confidence, 1e-9)
	require.InDelta(t, 0.6, s.PriorityBoost, 1e-9, "(100-40)/100")
	require.True(t, s.PreferredPersona)
	require.InDelta(t, 0.25*0.5*0.8*1.6, s.Total, 1e-9)

	// no capabilities asked: overlap 1; load is clamped to [0,1]; priority past 100 gives no boost
	s = planner.ScoreCandidate(&domain.Mission{Priority: 200}, planner.Candidate{Capabilities: []string{"go"}, Load: 3, Confidence: 1})
	require.InDelta(t, 1, s.CapabilityOverlap, 1e-9)
	require.InDelta(t, 1, s.Load, 1e-9)
	require.InDelta(t, 0, s.PriorityBoost, 1e-9)
	require.InDelta(t, 0, s.Total, 1e-9)
}

func TestAssign_PersonaRoutingAndFallback(t *testing.T) {
	architect := planner.Candidate{Name: "opus", PreferredPersona: "architect", Confidence: 0.5, Load: 0.9}
	worker := planner.Candidate{Name: "sonnet", PreferredPersona: "implementer", Confidence: 0.9}
	only := planner.Candidate{Name: "reviewers", Personas: []string{"reviewer"}, Confidence: 1}

	cases := []struct {
		name  string
		m     domain.Mission
		cands []planner.Candidate
		want  string
		ok    bool
		all   int
	}{
		// the preferred persona wins over a higher score
		{"preferred persona beats score", domain.Mission{Persona: "architect"}, []planner.Candidate{worker, architect}, "opus", true, 2},
		// no candidate prefers the persona: the best score among the eligible (fallback)
		{"fallback to the best eligible", domain.Mission{Persona: "debugger"}, []planner.Candidate{architect, worker, only}, "sonnet", true, 2},
		// the allowed-persona filter is hard: only the reviewers' profile may review
		{"allowed personas filter", domain.Mission{Persona: "reviewer"}, []planner.Candidate{only}, "reviewers", true, 1},
		{"nobody may", domain.Mission{Persona: "auditor"}, []planner.Candidate{only}, "", false, 0},
		{"capability filter", domain.Mission{Capabilities: []string{"gpu"}}, []planner.Candidate{worker, {Name: "gpu", Capabilities: []string{"gpu"}, Confidence: 0.1}}, "gpu", true, 1},
		// equal scores: the earlier candidate (deterministic)
		{"tie goes to the first", domain.Mission{}, []planner.Candidate{{Name: "a", Confidence: 1}, {Name: "b", Confidence: 1}}, "a", true, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			best, all, ok := planner.Assign(&c.m, c.cands)
			require.Equal(t, c.ok, ok)
			require.Len(t, all, c.all, "every eligible candidate's score is recorded")
			if ok {
				require.Equal(t, c.want, best.Profile)
			}
			again, _, _ := planner.Assign(&c.m, c.cands)
			require.Equal(t, best, again, "the same inputs give the same choice")
		})
	}
}

// A less loaded, more confident specialist beats a busy generalist.
func TestAssign_LoadAndConfidenceDecide(t *testing.T) {
	m := domain.Mission{Capabilities: []string{"go"}}
	busy := planner.Candidate{Name: "busy", Capabilities: []string{"go"}, Load: 0.75, Confidence: 0.9}
	idle := planner.Candidate{Name: "idle", Capabilities: []string{"go"}, Load: 0, Confidence: 0.6}
	generalist := planner.Candidate{Name: "generalist", Capabilities: []string{"go", "js", "sql"}, Load: 0, Confidence: 0.9}
	best, all, ok := planner.Assign(&m, []planner.Candidate{busy, generalist, idle})
	require.True(t, ok)
	require.Len(t, all, 3)
	require.Equal(t, "idle", best.Profile, "%+v", all)
}
