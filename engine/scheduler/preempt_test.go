package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// An urgent mission that waits only for a slot makes the lowest-priority running mission
// checkpoint and yield; the urgent one runs, then the other resumes from its checkpoint.
func TestLoop_UrgentMissionPreempts(t *testing.T) {
	h := newHarness(t, func(_ *engine.Options, c *scheduler.Config) { c.MaxConcurrency = 1 })
	low := h.create(engine.MissionSpec{Title: "low", Priority: 200, WriteArea: []string{"low.txt"},
		Brief: "@heartbeat 100ms\n@write low.txt \"part 1\\n\"\n@commit part 1\n@checkpoint part 1 done\n@sleep 3s\n@append low.txt \"part 2\\n\"\n@commit part 2\n@done"})
	h.until("low runs", func() bool { return h.mission(low.ID).State == domain.StateRunning })
	urgent := h.create(engine.MissionSpec{Title: "urgent", Priority: 5, WriteArea: []string{"urgent.txt"},
		Brief: "@write urgent.txt now\n@commit urgent\n@done"})
	h.until("urgent lands", func() bool { return h.mission(urgent.ID).Landing == domain.LandingLanded })
	d, err := h.eng.GetMission(h.ctx, low.ID)
	require.NoError(t, err)
	require.Equal(t, domain.OutcomeYielded, d.Attempts[0].Outcome)
	h.until("low resumes and lands", func() bool { return h.mission(low.ID).Landing == domain.LandingLanded })
	body, _ := h.file("low.txt")
	require.Equal(t, "part 1\npart 2\n", body, "resumed in its own workspace from its checkpoint")
	require.Equal(t, 2, h.mission(low.ID).Attempt)
}
