package scheduler_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// A real reference-agent process that goes silent and does not answer agent.ping (@deaf) is
// recorded as stalled (the mission's progress and an agent.stalled event say so, naming the
// profile and its thresholds), then stopped at its stall timeout: the attempt fails with
// kind timeout and carries the agent's last output, which get_mission shows.
func TestStall_SilentAgentIsRecordedThenStoppedWithKindTimeoutAndItsTail(t *testing.T) {
	h := newHarness(t, func(_ *engine.Options, c *scheduler.Config) {
		p := refProfile("quiet")
		p.StallThreshold = agent.Duration(300 * time.Millisecond)
		p.StallTimeout = agent.Duration(1500 * time.Millisecond)
		c.Profiles = []agent.Profile{p}
	})
	zero := 0
	c, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "goes quiet", WriteArea: []string{"q/**"}, RetryBudget: &zero,
		Brief: "@progress 40 halfway\n@log info working on step 3\n@deaf\n@hang"}, "test")
	require.NoError(t, err)
	id := c.Mission.ID
	h.until("the attempt ends", func() bool { return h.mission(id).State == domain.StateFailed })

	d, err := h.eng.GetMission(h.ctx, id)
	require.NoError(t, err)
	require.Len(t, d.Attempts, 1)
	f := d.Attempts[0].Failure
	require.NotNil(t, f)
	require.Equal(t, domain.FailureTimeout, f.Kind, "%+v", f)
	require.Contains(t, f.Summary, "stall_timeout 1.5s (profile quiet)")
	require.Contains(t, f.Diagnostic, "last output (stdout):")
	require.Contains(t, f.Diagnostic, "working on step 3", "the agent's last words travel with the failure")
	require.Equal(t, f, d.Mission.LastFailure)

	evs, err := h.eng.Events(h.ctx, engine.EventFilter{MissionID: id, Types: []string{engine.EventStalled}, Limit: 10})
	require.NoError(t, err)
	// One notice per silence: at least the one before the stop (a slow start may be a
	// silence of its own, before the agent's first line).
	require.NotEmpty(t, evs)
	var data struct {
		Message string  `json:"message"`
		Pinged  bool    `json:"pinged"`
		Timeout float64 `json:"stall_timeout_seconds"`
	}
	require.NoError(t, jsonUnmarshal(evs[len(evs)-1].Data, &data))
	require.True(t, data.Pinged)
	require.Equal(t, 1.5, data.Timeout)
	require.True(t, strings.HasPrefix(data.Message, "stalled: no output for "), data.Message)
	require.Contains(t, data.Message, "(profile quiet, stall_threshold 300ms): pinged (agent.ping); stopped with failure kind timeout if still silent at 1.5s (stall_timeout)")
}

// While it is silent, the stall shows on the running mission (get_mission's progress, and
// status's list of stalled missions), with
// the percent the agent last reported (a slow start may be reported first, before the
// agent's progress: the wait is for the notice that follows it).
func TestStall_ShowsOnRunningMission(t *testing.T) {
	h := newHarness(t, func(_ *engine.Options, c *scheduler.Config) {
		p := refProfile("quiet")
		p.StallThreshold = agent.Duration(300 * time.Millisecond)
		p.StallTimeout = agent.Duration(time.Hour)
		c.Profiles = []agent.Profile{p}
	})
	c, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "goes quiet", WriteArea: []string{"q/**"},
		Brief: "@progress 40 halfway\n@deaf\n@hang"}, "test")
	require.NoError(t, err)
	id := c.Mission.ID
	h.until("the stall shows", func() bool {
		m := h.mission(id)
		return m.Progress != nil && strings.HasPrefix(m.Progress.Message, "stalled: ") &&
			m.Progress.Percent != nil && *m.Progress.Percent == 40
	})
	m := h.mission(id)
	require.Equal(t, domain.StateRunning, m.State, "a stall alone stops nothing before the stall timeout")
	stalled, err := h.eng.StalledMissions(h.ctx) // what status lists
	require.NoError(t, err)
	require.Equal(t, []string{id}, stalled)
	_, err = h.eng.Cancel(h.ctx, id, "test over", false, "test")
	require.NoError(t, err)
	h.until("the agent is stopped", func() bool { return h.mission(id).State.Terminal() })
}
