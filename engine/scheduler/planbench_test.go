package scheduler_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// BenchmarkPlanningTick is the cost of one tick (RunOnce) whose planning step looks at a full
// wave of 200 held missions and whose settlement decides a voyage: 100 standalone missions no
// profile offers what they need (waiting for an agent), and a voyage of 100 — a chain of hard
// dependencies behind a first mission that waits for an agent too. Nothing is dispatched, so
// the figure is the planning step (snapshot, decision, holds unchanged) and the settlement's
// agent check, ticks after the first being the steady state of a backlog nobody can take.
//
//	go test ./engine/scheduler -run '^$' -bench PlanningTick -benchtime 200x
func BenchmarkPlanningTick(b *testing.B) {
	h := newHarness(b, withConfig(func(c *scheduler.Config) { c.UnclaimedGrace = time.Hour }))
	specs := make([]engine.MissionSpec, 100)
	for i := range specs {
		specs[i] = engine.MissionSpec{Key: fmt.Sprintf("k%d", i), Title: fmt.Sprintf("v%d", i), WriteArea: []string{fmt.Sprintf("v%d", i)}}
		if i == 0 {
			specs[i].Capabilities = []string{"gpu"}
		} else {
			specs[i].DependsOn = []string{fmt.Sprintf("k%d", i-1)}
		}
	}
	_, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "chain", Missions: specs}, "bench")
	require.NoError(b, err)
	for i := range 100 {
		h.createB(engine.MissionSpec{Title: fmt.Sprintf("s%d", i), Capabilities: []string{"gpu"}, WriteArea: []string{fmt.Sprintf("s%d", i)}})
	}
	rep, err := h.s.RunOnce(h.ctx)
	require.NoError(b, err)
	require.Equal(b, 200, rep.Held)
	b.ResetTimer()
	for range b.N {
		rep, err := h.s.RunOnce(h.ctx)
		require.NoError(b, err)
		require.Empty(b, rep.Dispatched)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/tick")
}
