package planner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// Armada's persona-aware routing and design brief §3's assignment: allowed personas and
// capabilities filter (hard), a profile whose preferred persona matches wins, otherwise the
// best score, and any eligible profile is the fallback (soft).
func TestCompute_PersonaRouting(t *testing.T) {
	t.Parallel()
	architect := planner.Profile{Name: "opus", Personas: []string{"architect"}, PreferredPersona: "architect", Confidence: 0.6, MaxConcurrency: 1}
	worker := planner.Profile{Name: "sonnet", Personas: []string{"worker", "architect"}, PreferredPersona: "worker", Confidence: 0.9, MaxConcurrency: 2}
	anyone := planner.Profile{Name: "any", Confidence: 0.95, MaxConcurrency: 1}
	cases := []struct {
		name     string
		m        domain.Mission
		profiles []planner.Profile
		busy     []domain.Mission
		want     string // profile; "" held
		code     string
	}{
		{name: "preferred persona beats a higher score", m: mission(1, persona("architect")), profiles: []planner.Profile{worker, architect, anyone}, want: "opus"},
		{name: "preferred persona of the other profile", m: mission(1, persona("worker")), profiles: []planner.Profile{architect, worker, anyone}, want: "sonnet"},
		{name: "allowed personas filter: only an unrestricted profile", m: mission(1, persona("tester")), profiles: []planner.Profile{architect, worker, anyone}, want: "any"},
		{name: "preferred profile busy: fall back to an eligible one", m: mission(1, persona("architect")), profiles: []planner.Profile{architect, worker},
			busy: []domain.Mission{mission(9, running("opus"))}, want: "sonnet"},
		{name: "no persona: the best score", m: mission(1), profiles: []planner.Profile{architect, worker, anyone}, want: "any"},
		{name: "nobody allowed the persona", m: mission(1, persona("tester")), profiles: []planner.Profile{architect, worker}, code: engine.WhyWaitingAgent},
		{name: "only profile busy", m: mission(1, persona("architect")), profiles: []planner.Profile{architect},
			busy: []domain.Mission{mission(9, running("opus"))}, code: engine.WhySlots},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := planner.Compute(snap([]domain.Mission{c.m}, c.busy...), t0, lim, c.profiles)
			if c.want != "" {
				require.Equal(t, []string{"m01→" + c.want}, dispatched(p), "held %v", p.Held)
				return
			}
			require.Equal(t, c.code, hold(t, p, "m01").Code, hold(t, p, "m01").Message)
		})
	}
}

// The dispatch carries the score breakdown of the chosen profile and of every free eligible
// profile: a specialist beats a generalist, load lowers the score, history moves confidence.
func TestCompute_ScoreBreakdown(t *testing.T) {
	t.Parallel()
	specialist := planner.Profile{Name: "go", Capabilities: []string{"go"}, Confidence: 0.8, MaxConcurrency: 2}
	generalist := planner.Profile{Name: "all", Capabilities: []string{"go", "python", "rust", "docs"}, Confidence: 0.8, MaxConcurrency: 2}
	p := planner.Compute(snap([]domain.Mission{mission(1, caps("go"), prio(50))}), t0, lim, []planner.Profile{generalist, specialist})
	require.Len(t, p.Dispatch, 1)
	d := p.Dispatch[0]
	require.Equal(t, "go", d.Profile)
	require.Equal(t, d.Score, d.Scores[1])
	require.Len(t, d.Scores, 2)
	require.InDelta(t, 1.0, d.Score.CapabilityOverlap, 1e-9)
	require.InDelta(t, 0.25, d.Scores[0].CapabilityOverlap, 1e-9)
	require.InDelta(t, 0.5, d.Score.PriorityBoost, 1e-9)
	require.InDelta(t, 1.0*(1-0)*0.8*1.5, d.Score.Total, 1e-9)

	// Half loaded and with a poor record, the specialist loses to the generalist.
	s := snap([]domain.Mission{mission(1, caps("go"))}, mission(9, running("go")))
	s.Outcomes = []engine.OutcomeCount{{Profile: "go", Total: 10, Completed: 0}, {Profile: "all", Total: 10, Completed: 10}}
	p = planner.Compute(s, t0, lim, []planner.Profile{generalist, specialist})
	require.Equal(t, []string{"m01→all"}, dispatched(p))
	got := p.Dispatch[0].Scores[1]
	require.InDelta(t, 0.5, got.Load, 1e-9)
	require.InDelta(t, planner.Confidence(specialist, [2]int{10, 0}), got.Confidence, 1e-9)
	require.InDelta(t, (0+0.8*2)/12, got.Confidence, 1e-9, "two attempts' weight for the prior")

	// A required capability no profile offers: nobody is eligible.
	p = planner.Compute(snap([]domain.Mission{mission(1, caps("haskell"))}), t0, lim, []planner.Profile{generalist, specialist})
	require.Equal(t, engine.WhyWaitingAgent, hold(t, p, "m01").Code)
	require.Contains(t, hold(t, p, "m01").Message, "capabilities haskell")
}

// The model policy: a forced model must be offered, agent_select picks within the allowed
// list, and a reviewer avoids the model its subject ran.
func TestCompute_ModelChoice(t *testing.T) {
	t.Parallel()
	p2 := planner.Profile{Name: "p", Models: []string{"m-large", "m-small"}, Confidence: 1, MaxConcurrency: 4}
	forced := mission(1, func(m *domain.Mission) {
		m.ModelPolicy = domain.ModelPolicy{Mode: domain.ModeSchedulerForced, Model: "m-small"}
	})
	unknown := mission(2, func(m *domain.Mission) {
		m.ModelPolicy = domain.ModelPolicy{Mode: domain.ModeSchedulerForced, Model: "m-huge"}
	})
	review := mission(3, func(m *domain.Mission) { m.Kind, m.SubjectID = domain.KindReview, "m09" })
	selected := mission(4, func(m *domain.Mission) {
		m.ModelPolicy = domain.ModelPolicy{Mode: domain.ModeAgentSelect, Allowed: []string{"m-small"}}
	})
	s := snap([]domain.Mission{forced, unknown, review, selected})
	s.SubjectModels = map[string]string{"m03": "m-large"}
	p := planner.Compute(s, t0, lim, []planner.Profile{p2})
	models := map[string]string{}
	for _, d := range p.Dispatch {
		models[d.Mission.ID] = d.Model
	}
	require.Equal(t, map[string]string{"m01": "m-small", "m03": "m-small", "m04": "m-small"}, models)
	r := hold(t, p, "m02")
	require.Equal(t, engine.WhyWaitingAgent, r.Code)
	require.Contains(t, r.Message, "model m-huge")
}
