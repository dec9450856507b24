package scheduler_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// metricsRecorder is a scheduler.Metrics that keeps what it is told.
type metricsRecorder struct {
	mu       sync.Mutex
	ticks    int
	landings map[string]int
	landDur  []time.Duration
	procs    map[string]int // running now, per profile
	launched map[string]int
}

func newMetricsRecorder() *metricsRecorder {
	return &metricsRecorder{landings: map[string]int{}, procs: map[string]int{}, launched: map[string]int{}}
}

func (r *metricsRecorder) TickObserved(time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ticks++
}

func (r *metricsRecorder) LandingObserved(result string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.landings[result]++
	r.landDur = append(r.landDur, d)
}

func (r *metricsRecorder) AgentProcess(profile string, running bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if running {
		r.procs[profile]++
		r.launched[profile]++
	} else {
		r.procs[profile]--
	}
}

var _ scheduler.Metrics = (*metricsRecorder)(nil)

// TestMetrics_LoopReportsTicksLandingsAndAgents: a voyage of two missions run by the loop
// with real reference agents reports every leader tick, one landing per mission with its
// result (the same as the stored landing records), and each agent process started and
// stopped under its profile.
func TestMetrics_LoopReportsTicksLandingsAndAgents(t *testing.T) {
	rec := newMetricsRecorder()
	h := newHarness(t, func(_ *engine.Options, c *scheduler.Config) { c.Metrics = rec })
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "observed", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a.txt"}, Brief: "@write a.txt a\n@commit a\n@done"},
		{Key: "b", Title: "b", WriteArea: []string{"b.txt"}, DependsOn: []string{"a"}, Brief: "@write b.txt b\n@commit b\n@done"},
	}}, "test")
	require.NoError(t, err)
	h.until("the voyage completes", func() bool { return h.voyageState(d.Voyage.ID) == domain.VoyageCompleted })
	h.until("the agents are no longer supervised", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return rec.procs["ref"] == 0
	})
	rec.mu.Lock()
	before := rec.ticks
	rec.mu.Unlock()
	require.Positive(t, before, "the leader's ticks are timed")
	rep, err := h.s.RunOnce(h.ctx)
	require.NoError(t, err)
	require.True(t, rep.Leader)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Equal(t, before+1, rec.ticks, "one more leader tick, one more observation")
	require.Equal(t, 2, rec.launched["ref"], "one agent process per mission")
	stored := map[string]int{}
	for _, id := range d.IDs {
		dt, err := h.eng.GetMission(h.ctx, id)
		require.NoError(t, err)
		for _, l := range dt.Landings {
			stored[l.Status]++
		}
	}
	require.Equal(t, map[string]int{"landed": 2}, stored)
	require.Equal(t, stored, rec.landings, "one landing observed per landing record, by result")
	require.Len(t, rec.landDur, 2)
}
