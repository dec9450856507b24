package planner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// Design brief §5 step 4: dispatch within the global, per-profile and per-repository limits;
// each planned dispatch takes its slot for the candidates after it.
func TestCompute_ConcurrencyLimits(t *testing.T) {
	t.Parallel()
	big := planner.Profile{Name: "gen", Confidence: 1, MaxConcurrency: 10}
	cases := []struct {
		name     string
		lim      planner.Limits
		profiles []planner.Profile
		cands    []domain.Mission
		run      []domain.Mission
		want     []string
		msg      string // in the first hold's message
	}{
		{name: "global", lim: planner.Limits{MaxConcurrency: 2, PerRepository: 9}, profiles: []planner.Profile{big},
			cands: []domain.Mission{mission(1), mission(2), mission(3)}, want: []string{"m01→gen", "m02→gen"}, msg: "max_concurrency 2"},
		{name: "global, counting running", lim: planner.Limits{MaxConcurrency: 2, PerRepository: 9}, profiles: []planner.Profile{big},
			cands: []domain.Mission{mission(1), mission(2)}, run: []domain.Mission{mission(9, running("gen"))}, want: []string{"m01→gen"}, msg: "(2 running, max_concurrency 2)"},
		{name: "a pull-mode agent's mission does not take a managed slot", lim: planner.Limits{MaxConcurrency: 1, PerRepository: 9}, profiles: []planner.Profile{big},
			cands: []domain.Mission{mission(1)}, run: []domain.Mission{mission(9, running(""))}, want: []string{"m01→gen"}},
		{name: "per repository counts every attempt", lim: planner.Limits{MaxConcurrency: 9, PerRepository: 2}, profiles: []planner.Profile{big},
			cands: []domain.Mission{mission(1), mission(2), mission(3, repo("/other"))}, run: []domain.Mission{mission(9, running(""))},
			want: []string{"m01→gen", "m03→gen"}, msg: "per_repository 2"},
		{name: "per profile", lim: planner.Limits{MaxConcurrency: 9, PerRepository: 9}, profiles: []planner.Profile{{Name: "one", Confidence: 1, MaxConcurrency: 1}},
			cands: []domain.Mission{mission(1), mission(2)}, want: []string{"m01→one"}, msg: "concurrency limit of profile one (1/1) reached"},
		{name: "per profile: the next profile takes it", lim: planner.Limits{MaxConcurrency: 9, PerRepository: 9},
			profiles: []planner.Profile{{Name: "one", Confidence: 1, MaxConcurrency: 1}, {Name: "two", Confidence: 0.1, MaxConcurrency: 1}},
			cands:    []domain.Mission{mission(1), mission(2)}, want: []string{"m01→one", "m02→two"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := planner.Compute(snap(c.cands, c.run...), t0, c.lim, c.profiles)
			require.Equal(t, c.want, dispatched(p))
			require.Equal(t, len(c.cands), p.Runnable, "held only for slots: every candidate is runnable")
			if c.msg == "" {
				require.Empty(t, p.Held)
				return
			}
			require.NotEmpty(t, p.Held)
			require.Equal(t, engine.WhySlots, p.Held[0].Reason.Code)
			require.Contains(t, p.Held[0].Reason.Message, c.msg)
		})
	}
}

// The resource gate (docs/configuration.md, "Resources"): a busy machine caps our agents in
// proportion, short memory or disk caps them at one, and one may always start.
func TestCompute_ResourceGate(t *testing.T) {
	t.Parallel()
	big := []planner.Profile{{Name: "gen", Confidence: 1, MaxConcurrency: 10}}
	l := planner.Limits{MaxConcurrency: 4, PerRepository: 9}
	cands := []domain.Mission{mission(1), mission(2), mission(3), mission(4)}
	cases := []struct {
		name     string
		readings []planner.Reading
		run      []domain.Mission
		want     int
		cap      int
	}{
		{name: "nothing short", readings: []planner.Reading{{Name: "load_per_cpu", Value: 0.5, Threshold: 2}}, want: 4, cap: 4},
		{name: "readings not taken", want: 4, cap: 4},
		{name: "load twice the threshold: half", readings: []planner.Reading{{Name: "load_per_cpu", Value: 4, Threshold: 2, Short: true}}, want: 2, cap: 2},
		{name: "memory short: one", readings: []planner.Reading{{Name: "available_memory_mb", Value: 10, Threshold: 512, Short: true}}, want: 1, cap: 1},
		{name: "disk short, one of ours running: none more", readings: []planner.Reading{{Name: "free_disk_mb", Value: 1, Threshold: 100, Short: true}},
			run: []domain.Mission{mission(9, running("gen"))}, want: 0, cap: 1},
		{name: "load far past the threshold: still one", readings: []planner.Reading{{Name: "load_per_cpu", Value: 100, Threshold: 1, Short: true}}, want: 1, cap: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := snap(cands, c.run...)
			s.Readings = c.readings
			p := planner.Compute(s, t0, l, big)
			require.Len(t, p.Dispatch, c.want)
			require.Equal(t, c.cap, p.Cap)
			if c.cap == l.MaxConcurrency {
				require.Empty(t, p.CapWhy)
				return
			}
			require.NotEmpty(t, p.CapWhy)
			r := p.Held[0].Reason
			require.Equal(t, engine.WhyResources, r.Code)
			require.Contains(t, r.Message, p.CapWhy)
			require.Contains(t, r.Message, "doctor shows the readings")
		})
	}
}

// An urgent mission held for a slot asks the least urgent yieldable running mission to yield;
// at most one per plan, never a mission as urgent or more, one that cannot yield, one already
// asked, or one only leased.
func TestCompute_Preemption(t *testing.T) {
	t.Parallel()
	one := planner.Limits{MaxConcurrency: 2, PerRepository: 9, UrgentPriority: 10}
	gen := []planner.Profile{{Name: "gen", Confidence: 1, MaxConcurrency: 9}}
	r100 := mission(20, running("gen"))
	r200 := mission(21, running("gen"), prio(200))
	r200b := mission(22, running("gen"), prio(200))
	cases := []struct {
		name      string
		cands     []domain.Mission
		run       []domain.Mission
		yieldable []string
		want      []string // victims
	}{
		{name: "least urgent, then highest id", cands: []domain.Mission{mission(1, prio(5))}, run: []domain.Mission{r100, r200, r200b},
			yieldable: []string{"m20", "m21", "m22"}, want: []string{"m22"}},
		{name: "only yieldable ones", cands: []domain.Mission{mission(1, prio(5))}, run: []domain.Mission{r100, r200},
			yieldable: []string{"m20"}, want: []string{"m20"}},
		{name: "not urgent", cands: []domain.Mission{mission(1, prio(11))}, run: []domain.Mission{r100, r200}, yieldable: []string{"m20", "m21"}},
		{name: "at most one per plan", cands: []domain.Mission{mission(1, prio(5)), mission(2, prio(6))}, run: []domain.Mission{r100, r200},
			yieldable: []string{"m20", "m21"}, want: []string{"m21"}},
		{name: "not as urgent as itself", cands: []domain.Mission{mission(1, prio(100))}, run: []domain.Mission{r100, r200},
			yieldable: []string{"m20", "m21"}},
		{name: "already asked", cands: []domain.Mission{mission(1, prio(5))},
			run: []domain.Mission{with(r200, func(m *domain.Mission) { m.Preempt = true }), r100}, yieldable: []string{"m20", "m21"}, want: []string{"m20"}},
		{name: "leased, not running", cands: []domain.Mission{mission(1, prio(5))},
			run: []domain.Mission{with(r200, func(m *domain.Mission) { m.State = domain.StateLeased }), r100}, yieldable: []string{"m20", "m21"}, want: []string{"m20"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := snap(c.cands, c.run...)
			s.Yieldable = map[string]bool{}
			for _, id := range c.yieldable {
				s.Yieldable[id] = true
			}
			p := planner.Compute(s, t0, one, gen)
			require.Empty(t, p.Dispatch)
			var victims []string
			for _, pr := range p.Preempt {
				victims = append(victims, pr.MissionID)
				require.Equal(t, "m01", pr.For)
				require.Contains(t, pr.Reason, "urgent mission m01 (priority 5) waits for a slot")
			}
			require.Equal(t, c.want, victims)
		})
	}
}

// Cluster mode (Snapshot.Node): the global and per-profile limits count the planning node's
// attempts only; the per-repository limit counts every node's.
func TestCompute_NodeLimitsCountOnlyThatNode(t *testing.T) {
	t.Parallel()
	gen := planner.Profile{Name: "gen", Confidence: 1, MaxConcurrency: 1}
	onNode := func(n string) func(*domain.Mission) { return func(m *domain.Mission) { m.Node = n } }
	otherNodes := []domain.Mission{mission(8, running("gen"), onNode("n2")), mission(9, running("gen"), onNode("n3"))}

	s := snap([]domain.Mission{mission(1), mission(2)}, otherNodes...)
	s.Node = "n1"
	p := planner.Compute(s, t0, planner.Limits{MaxConcurrency: 1, PerRepository: 9}, []planner.Profile{gen})
	require.Equal(t, []string{"m01→gen"}, dispatched(p), "the other nodes' attempts take none of n1's slots")
	require.Equal(t, engine.WhySlots, p.Held[0].Reason.Code)
	require.Contains(t, p.Held[0].Reason.Message, "on node n1")

	s.Running = append(s.Running, mission(7, running("gen"), onNode("n1")))
	p = planner.Compute(s, t0, planner.Limits{MaxConcurrency: 1, PerRepository: 9}, []planner.Profile{gen})
	require.Empty(t, dispatched(p), "n1's own attempt fills its slot")

	s = snap([]domain.Mission{mission(1)}, otherNodes...)
	s.Node = "n1"
	p = planner.Compute(s, t0, planner.Limits{MaxConcurrency: 5, PerRepository: 2}, []planner.Profile{{Name: "gen", Confidence: 1, MaxConcurrency: 5}})
	require.Empty(t, dispatched(p), "the repository is shared: every node's attempts count")
	require.Contains(t, p.Held[0].Reason.Message, "per_repository 2")

	s.Node = ""
	p = planner.Compute(snap([]domain.Mission{mission(1)}, otherNodes...), t0, planner.Limits{MaxConcurrency: 2, PerRepository: 9}, []planner.Profile{{Name: "gen", Confidence: 1, MaxConcurrency: 5}})
	require.Empty(t, dispatched(p), "a single node counts every attempt")
}
