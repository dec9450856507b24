package planner_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

func edge(typ domain.EdgeType, other domain.Mission) engine.Edge {
	return engine.Edge{Dependency: domain.Dependency{MissionID: "m01", DependsOn: other.ID, Type: typ}, Other: other}
}

func with(m domain.Mission, opts ...func(*domain.Mission)) domain.Mission {
	for _, o := range opts {
		o(&m)
	}
	return m
}

func state(s domain.MissionState, l domain.LandingState) func(*domain.Mission) {
	return func(m *domain.Mission) { m.State, m.Landing = s, l }
}

// Design brief §3, "runnable": each rule holds the mission back with its own reason code, and
// the rule's absence lets it run. m01 is the candidate; m02 the mission at the other end.
func TestCompute_RunnableRules(t *testing.T) {
	t.Parallel()
	u := mission(2)
	cases := []struct {
		name   string
		m      domain.Mission
		edges  engine.Edges
		paused bool
		run    []domain.Mission
		want   string // reason code; "" runs
	}{
		{name: "plain pending runs", m: mission(1)},
		{name: "interrupted runs", m: with(mission(1), func(m *domain.Mission) { m.State = domain.StateInterrupted })},
		{name: "paused", m: mission(1), paused: true, want: engine.WhyPaused},
		{name: "waiting for children", m: with(mission(1), func(m *domain.Mission) { m.WaitReason = engine.WaitChildren }), want: engine.WhyChildren},
		{name: "backoff not passed", m: with(mission(1), func(m *domain.Mission) { m.NotBefore = t0.Add(time.Hour) }), want: engine.WhyBackoff},
		{name: "backoff passed", m: with(mission(1), func(m *domain.Mission) { m.NotBefore = t0.Add(-time.Second) })},
		{name: "hard dependency pending", m: mission(1), edges: engine.Edges{Deps: []engine.Edge{edge(domain.EdgeHard, u)}}, want: engine.WhyHardDep},
		{name: "hard dependency completed, not landed", m: mission(1),
			edges: engine.Edges{Deps: []engine.Edge{edge(domain.EdgeHard, with(u, state(domain.StateCompleted, domain.LandingPending)))}}, want: engine.WhyHardDep},
		{name: "hard dependency completed and landed", m: mission(1),
			edges: engine.Edges{Deps: []engine.Edge{edge(domain.EdgeHard, with(u, state(domain.StateCompleted, domain.LandingLanded)))}}},
		{name: "hard dependency completed, landing not required", m: mission(1),
			edges: engine.Edges{Deps: []engine.Edge{edge(domain.EdgeHard, with(u, state(domain.StateCompleted, domain.LandingNotRequired)))}}},
		{name: "hard dependency failed", m: mission(1),
			edges: engine.Edges{Deps: []engine.Edge{edge(domain.EdgeHard, with(u, state(domain.StateFailed, domain.LandingNone)))}}, want: engine.WhyHardDep},
		{name: "serialization predecessor running", m: mission(1),
			edges: engine.Edges{Deps: []engine.Edge{edge(domain.EdgeSerialization, with(u, running("gen")))}}, want: engine.WhySerialized},
		{name: "serialization predecessor failed (terminal)", m: mission(1),
			edges: engine.Edges{Deps: []engine.Edge{edge(domain.EdgeSerialization, with(u, state(domain.StateFailed, domain.LandingNone)))}}},
		{name: "conflict partner running", m: mission(1),
			edges: engine.Edges{Deps: []engine.Edge{edge(domain.EdgeConflict, with(u, running("gen")))}}, want: engine.WhyConflict},
		{name: "conflict declared towards it, partner running", m: mission(1),
			edges: engine.Edges{ConflictsIn: []engine.Edge{edge(domain.EdgeConflict, with(u, running("gen")))}}, want: engine.WhyConflict},
		{name: "conflict partner pending", m: mission(1), edges: engine.Edges{Deps: []engine.Edge{edge(domain.EdgeConflict, u)}}},
		{name: "soft edge never holds", m: mission(1), edges: engine.Edges{Deps: []engine.Edge{edge(domain.EdgeSoft, u)}}},
		{name: "exclusive mission beside a running one", m: with(mission(1), exclusive), run: []domain.Mission{with(u, running("gen"))}, want: engine.WhyExclusive},
		{name: "beside a running exclusive mission", m: mission(1), run: []domain.Mission{with(u, running("gen"), exclusive)}, want: engine.WhyExclusive},
		{name: "serial retry beside a running one", m: with(mission(1), func(m *domain.Mission) { m.Serial = true }), run: []domain.Mission{with(u, running("gen"))}, want: engine.WhyExclusive},
		{name: "exclusive in another repository", m: with(mission(1), exclusive), run: []domain.Mission{with(u, running("gen"), repo("/other"))}},
		{name: "disjoint write areas side by side", m: mission(1), run: []domain.Mission{with(u, running("gen"))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := snap([]domain.Mission{c.m}, c.run...)
			s.Edges[c.m.ID], s.Paused = c.edges, c.paused
			p := planner.Compute(s, t0, lim, []planner.Profile{gen})
			if c.want == "" {
				require.Equal(t, []string{"m01→gen"}, dispatched(p), "held: %v", p.Held)
				require.Empty(t, p.Held)
				require.Equal(t, 1, p.Runnable)
				require.Equal(t, "m01", planner.FirstRunnable(s, t0))
				return
			}
			r := hold(t, p, "m01")
			require.Equal(t, c.want, r.Code, r.Message)
			require.NotEmpty(t, r.Message, "every hold says why in words")
			require.Empty(t, p.Dispatch)
			require.Zero(t, p.Runnable, "a mission the runnable rule holds is not counted runnable")
			require.Empty(t, planner.FirstRunnable(s, t0))
			require.Equal(t, engine.Blockers(&c.m, c.edges, c.paused, c.run, t0)[0], r, "the hold is the rule's first reason (the text explain gives)")
		})
	}
}

// Missions the plan dispatches count as leased for the candidates after them: the acquire
// would refuse a second mission beside an exclusive one, so the plan holds it with the reason.
func TestCompute_PlannedDispatchCountsAsLive(t *testing.T) {
	t.Parallel()
	a, b := mission(1, exclusive), mission(2)
	c := mission(3)
	s := snap([]domain.Mission{a, b, c})
	s.Edges[c.ID] = engine.Edges{Deps: []engine.Edge{{Dependency: domain.Dependency{MissionID: c.ID, DependsOn: a.ID, Type: domain.EdgeConflict}, Other: a}}}
	p := planner.Compute(s, t0, lim, []planner.Profile{{Name: "gen", Confidence: 1, MaxConcurrency: 8}})
	require.Equal(t, []string{"m01→gen"}, dispatched(p))
	require.Equal(t, engine.WhyExclusive, hold(t, p, "m02").Code)
	r := hold(t, p, "m03")
	require.Equal(t, engine.WhyConflict, r.Code, r.Message)
	require.Equal(t, "m01", r.MissionID)
	require.Equal(t, domain.StatePending, s.Edges[c.ID].Deps[0].Other.State, "the snapshot is not changed")
}
