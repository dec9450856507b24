package planner_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// titled is a mission with a title (the Armada tables name missions by title).
func titled(i int, title string, opts ...func(*domain.Mission)) domain.Mission {
	m := mission(i, opts...)
	m.Title = title
	return m
}

// Armada's "Full Scheduling Scenario" (shared/cases/armada-scheduling.md): two captains, five
// missions dispatched in this order. Both idle: "Fix login crash" (priority 1) and "Add unit
// tests" (priority 100, active voyage, beats the standalone "Add rate limiting"); then, one
// captain at a time: "Add integration tests", "Add rate limiting", "Fix typos in docs".
func TestCompute_ArmadaFullSchedulingScenario(t *testing.T) {
	t.Parallel()
	all := []domain.Mission{
		titled(1, "Add unit tests", voyage("vyg_testing")),
		titled(2, "Fix typos in docs", prio(200)),
		titled(3, "Add rate limiting"),
		titled(4, "Fix login crash", prio(1)),
		titled(5, "Add integration tests", voyage("vyg_testing")),
	}
	captains := []planner.Profile{{Name: "captain", Confidence: 1, MaxConcurrency: 2}}
	pending := slices.Clone(all)
	var runningNow []domain.Mission
	var order [][]string
	for len(pending) > 0 {
		p := planner.Compute(snap(pending, runningNow...), t0, lim, captains)
		require.NotEmpty(t, p.Dispatch, "held: %v", p.Held)
		var step []string
		for _, d := range p.Dispatch {
			step = append(step, d.Mission.Title)
			pending = slices.DeleteFunc(pending, func(m domain.Mission) bool { return m.ID == d.Mission.ID })
			runningNow = append(runningNow, with(d.Mission, running(d.Profile)))
		}
		for _, h := range p.Held {
			require.Equal(t, engine.WhySlots, h.Reason.Code, "only the captains' slots hold the rest back: %s", h.Reason.Message)
		}
		order = append(order, step)
		runningNow = runningNow[1:] // the captain that started first finishes first
	}
	require.Equal(t, [][]string{
		{"Fix login crash", "Add unit tests"},
		{"Add integration tests"},
		{"Add rate limiting"},
		{"Fix typos in docs"},
	}, order)
}

// Armada's interleaving example: priority first, then an active voyage's mission before a
// standalone one of the same priority.
func TestCompute_ArmadaVoyageInterleaving(t *testing.T) {
	t.Parallel()
	a := titled(1, "msn_A", voyage("vyg_sprint1"))
	b := titled(2, "msn_B")
	c := titled(3, "msn_C", prio(50))
	one := []planner.Profile{{Name: "captain", Confidence: 1, MaxConcurrency: 1}}
	var got []string
	pending := []domain.Mission{a, b, c}
	for len(pending) > 0 {
		p := planner.Compute(snap(pending), t0, lim, one)
		require.Len(t, p.Dispatch, 1)
		got = append(got, p.Dispatch[0].Mission.Title)
		pending = slices.DeleteFunc(pending, func(m domain.Mission) bool { return m.ID == p.Dispatch[0].Mission.ID })
	}
	require.Equal(t, []string{"msn_C", "msn_A", "msn_B"}, got)
}

// The pick order's keys in turn (design brief §3): priority, active voyage, resumed before
// fresh, creation time, id. The candidates' input order does not matter.
func TestPickOrder(t *testing.T) {
	t.Parallel()
	interrupted := func(m *domain.Mission) { m.State = domain.StateInterrupted }
	sameTime := func(m *domain.Mission) { m.CreatedAt = t0 }
	want := []domain.Mission{
		mission(9, prio(1)),
		mission(8, voyage("v")),
		mission(7, interrupted),
		mission(1),
		mission(2, sameTime),
		mission(3, sameTime), // same time as m02: the id decides
		mission(0, prio(200)),
	}
	want[4].CreatedAt = t0.Add(5 * 1e9)
	want[5].CreatedAt = want[4].CreatedAt
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		got := slices.Clone(want)
		rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		slices.SortFunc(got, func(a, b domain.Mission) int { return planner.PickOrder(&a, &b) })
		require.Equal(t, ids(want), ids(got))
		p := planner.Compute(snap(got), t0, lim, []planner.Profile{{Name: "gen", Confidence: 1, MaxConcurrency: 1}})
		require.Equal(t, want[0].ID, p.Dispatch[0].Mission.ID)
		require.Equal(t, want[0].ID, planner.FirstRunnable(snap(got), t0))
		var held []string
		for _, h := range p.Held {
			held = append(held, h.MissionID)
		}
		require.Equal(t, ids(want[1:]), held, "holds are listed in pick order")
	}
}

func ids(ms []domain.Mission) []string {
	out := make([]string, len(ms))
	for i := range ms {
		out[i] = ms[i].ID
	}
	return out
}

// The same snapshot always gives the same plan, and Compute changes nothing it was given.
func TestCompute_Deterministic(t *testing.T) {
	t.Parallel()
	cands := []domain.Mission{mission(3, caps("go")), mission(1, persona("reviewer")), mission(2, prio(5)), mission(4, exclusive)}
	s := snap(cands, mission(5, running("b"), prio(300)))
	s.Yieldable = map[string]bool{"m05": true}
	profiles := []planner.Profile{{Name: "a", Capabilities: []string{"go"}, Confidence: 0.5, MaxConcurrency: 1},
		{Name: "b", Personas: []string{"reviewer"}, PreferredPersona: "reviewer", Confidence: 0.9, MaxConcurrency: 1}}
	before := slices.Clone(cands)
	first := planner.Compute(s, t0, lim, profiles)
	for range 10 {
		require.Equal(t, first, planner.Compute(s, t0, lim, profiles))
	}
	require.Equal(t, before, s.Missions, "the snapshot's candidates are not reordered or changed")
}
