package scheduler_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

func (h *harness) create(spec engine.MissionSpec) domain.Mission {
	h.t.Helper()
	c, err := h.eng.CreateMission(h.ctx, spec, "test")
	require.NoError(h.t, err)
	return c.Mission
}

// A failing agent is retried within its budget; the decision and the attempts are recorded.
func TestLoop_FailureIsRetriedThenFails(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "always fails", WriteArea: []string{"x/**"}, RetryBudget: ptr(1),
		Brief: "@fail test \"TestX failed\""})
	h.until("the mission fails for good", func() bool { return h.mission(m.ID).State == domain.StateFailed })
	d, err := h.eng.GetMission(h.ctx, m.ID)
	require.NoError(t, err)
	require.Len(t, d.Attempts, 2, "one retry, then the identical failure spends the budget")
	require.Equal(t, domain.DecisionFail, d.Mission.Decision.Kind)
	require.Equal(t, "test", d.Mission.LastFailure.Kind)
}

// An agent that asks for a decision blocks its mission with an escalation; resolving it with
// retry runs it again.
func TestLoop_BlockedThenResolved(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "needs a decision", WriteArea: []string{"d.txt"},
		Brief: "@block \"which database?\""})
	h.until("the mission blocks", func() bool { return h.mission(m.ID).State == domain.StateBlocked })
	d, err := h.eng.GetMission(h.ctx, m.ID)
	require.NoError(t, err)
	require.NotNil(t, d.Escalation)
	require.Contains(t, d.Escalation.DecisionRequired, "which database?")
	// Change the brief (allowed while blocked), then resolve with retry.
	brief := "@write d.txt \"postgres\\n\"\n@commit decided\n@done decided"
	_, err = h.eng.UpdateMission(h.ctx, m.ID, engine.MissionPatch{Brief: &brief}, "test")
	require.NoError(t, err)
	_, err = h.eng.ResolveEscalation(h.ctx, d.Escalation.ID, engine.ResolveRetry, "postgres", "person")
	require.NoError(t, err)
	h.until("it lands", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })
	body, ok := h.file("d.txt")
	require.True(t, ok)
	require.Equal(t, "postgres\n", body)
}

// Cancelling a running mission stops its agent's process group within the grace period.
func TestLoop_CancelStopsTheAgent(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "long", WriteArea: []string{"l/**"}, Brief: "@heartbeat 100ms\n@sleep 60s\n@done"})
	// Running comes first (acquire and start are one transaction), the run record with the
	// agent's pid once the agent is launched.
	h.until("its agent runs", func() bool {
		got := h.mission(m.ID)
		return got.State == domain.StateRunning && len(got.Run) > 0 && runPID(t, got) != 0
	})
	pid := runPID(t, h.mission(m.ID))
	require.NotZero(t, pid)
	require.True(t, processAlive(pid))
	start := time.Now()
	_, err := h.eng.Cancel(h.ctx, m.ID, "not needed", false, "test")
	require.NoError(t, err)
	h.until("the agent is gone", func() bool { return !processAlive(pid) })
	require.Less(t, time.Since(start), 10*time.Second, "stopped within the grace period (plus a generous margin)")
	require.Equal(t, domain.StateCancelled, h.mission(m.ID).State)
}

// A scheduler that stops detaches from its agents; the next one re-attaches to an agent that
// still runs and collects the result of one that finished while nobody watched.
func TestLoop_RestartReattachesAndCollects(t *testing.T) {
	h := newHarness(t)
	slow := h.create(engine.MissionSpec{Title: "slow", WriteArea: []string{"slow.txt"},
		Brief: "@heartbeat 100ms\n@sleep 8s\n@write slow.txt \"slow\\n\"\n@commit slow\n@done slow"})
	quick := h.create(engine.MissionSpec{Title: "quick", WriteArea: []string{"quick.txt"},
		Brief: "@sleep 3s\n@write quick.txt \"quick\\n\"\n@commit quick\n@done quick"})
	// Both agents launched (their pids recorded) and neither finished: on a loaded machine a
	// short sleep could end before the other agent ran, so the sleeps are long and the wait
	// below is for the quick agent's process, not for a fixed time.
	h.until("both run", func() bool {
		s, q := h.mission(slow.ID), h.mission(quick.ID)
		return s.State == domain.StateRunning && q.State == domain.StateRunning && len(s.Run) > 0 && len(q.Run) > 0 &&
			runPID(t, s) != 0 && runPID(t, q) != 0
	})
	quickPID := runPID(t, h.mission(quick.ID))
	require.NoError(t, h.s.Stop(h.ctx)) // agents keep working unwatched
	h.until("quick's agent ends while no scheduler watches", func() bool { return !processAlive(quickPID) })

	next, err := scheduler.New(h.eng, h.wt, h.run, scheduler.Config{DataDir: h.data, Tick: 50 * time.Millisecond,
		Profiles: []agent.Profile{refProfile("ref", "implementer")}})
	require.NoError(t, err)
	h.s = next
	h.until("both land", func() bool {
		return h.mission(slow.ID).Landing == domain.LandingLanded && h.mission(quick.ID).Landing == domain.LandingLanded
	})
	for _, id := range []string{slow.ID, quick.ID} {
		d, err := h.eng.GetMission(h.ctx, id)
		require.NoError(t, err)
		require.Equal(t, 1, d.Mission.Attempt, "re-attached, not re-run")
	}
}

// Runnable missions are held back with a reason the wave records: here no profile offers the
// persona. The mission waits for an agent to claim it for the grace period, then the voyage
// blocks with a no_agent report (not a deadlock) instead of idling.
func TestLoop_NoProfileHoldsAndBlocksTheVoyage(t *testing.T) {
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.UnclaimedGrace = 200 * time.Millisecond }))
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "x", Title: "needs an astronaut", Persona: "astronaut", WriteArea: []string{"x"}}}}, "test")
	require.NoError(t, err)
	h.until("the voyage blocks", func() bool { return h.voyageState(d.Voyage.ID) == domain.VoyageBlocked })
	w, err := h.eng.LatestWave(h.ctx)
	require.NoError(t, err)
	require.Len(t, w.Held, 1)
	require.Contains(t, w.Held[0].Reason, "no agent offers persona astronaut")
	vs, err := h.eng.VoyageStatus(h.ctx, d.Voyage.ID)
	require.NoError(t, err)
	require.Len(t, vs.Escalations, 1)
	require.Equal(t, engine.KindNoAgent, vs.Escalations[0].Kind)
}

func ptr(n int) *int { return &n }

func runPID(t *testing.T, m domain.Mission) int {
	t.Helper()
	var rec scheduler.RunRecord
	require.NoError(t, jsonUnmarshal(m.Run, &rec))
	return rec.PID
}

func processAlive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}
