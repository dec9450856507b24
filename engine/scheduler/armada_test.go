package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// armadaOrder is the order in which Armada's "Full Scheduling Scenario"
// (../shared/cases/armada-scheduling.md) assigns its five missions: priority first, then the
// active voyage's missions, then FIFO.
var armadaOrder = []string{"Fix login crash", "Add unit tests", "Add integration tests", "Add rate limiting", "Fix typos in docs"}

// armadaScenario creates the scenario's missions in its order (1 ms apart, so that creation
// order is FIFO order) and returns mission id → title.
func armadaScenario(t *testing.T, h *harness) (voyageID string, titles map[string]string) {
	t.Helper()
	titles = map[string]string{}
	spec := func(title, file string, priority int) engine.MissionSpec {
		return engine.MissionSpec{Title: title, Priority: priority, WriteArea: []string{file},
			Brief: "@write " + file + " \"" + title + "\\n\"\n@commit " + file + "\n@done"}
	}
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "vyg_testing", Missions: []engine.MissionSpec{
		withKey("unit", spec("Add unit tests", "unit.txt", 100))}}, "test")
	require.NoError(t, err)
	for _, id := range d.IDs {
		titles[id] = "Add unit tests"
	}
	for _, s := range []engine.MissionSpec{spec("Fix typos in docs", "typos.txt", 200), spec("Add rate limiting", "rate.txt", 100),
		spec("Fix login crash", "crash.txt", 1), spec("Add integration tests", "integration.txt", 100)} {
		time.Sleep(2 * time.Millisecond) // wall time: each mission its own creation millisecond (FIFO)
		if s.Title == "Add integration tests" {
			s.VoyageID = d.Voyage.ID
		}
		c, err := h.eng.CreateMission(h.ctx, s, "test")
		require.NoError(t, err)
		titles[c.Mission.ID] = s.Title
	}
	return d.Voyage.ID, titles
}

func withKey(key string, s engine.MissionSpec) engine.MissionSpec {
	s.Key = key
	return s
}

// pauseUntilBlocked ticks a scheduler that has no agent until the grace period is over and
// the voyage blocks waiting for one: the "short pause" before the agents come.
func pauseUntilBlocked(h *harness, voyageID string) {
	h.until("the voyage blocks waiting for an agent", func() bool { return h.voyageState(voyageID) == domain.VoyageBlocked })
}

// acquireOrder lists the titles of the missions in the order they were leased.
func acquireOrder(t *testing.T, h *harness, titles map[string]string) []string {
	t.Helper()
	evs, err := h.eng.Events(h.ctx, engine.EventFilter{Types: []string{"lease.acquired"}, Limit: 100})
	require.NoError(t, err)
	var out []string
	for _, e := range evs {
		out = append(out, titles[e.MissionID])
	}
	return out
}

// Issue 13 item 6, pull mode: two agents claim the scenario's missions after the voyage was
// blocked for want of an agent; a standalone mission created earlier never goes before the
// active voyage's mission of the same priority.
func TestArmadaScenario_PullAfterAPause(t *testing.T) {
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.Profiles = nil; c.UnclaimedGrace = 300 * time.Millisecond }))
	voyageID, titles := armadaScenario(t, h)
	pauseUntilBlocked(h, voyageID)
	claim := func(agentID string) engine.Claimed {
		t.Helper()
		c, err := h.s.Pull().Claim(h.ctx, engine.ClaimRequest{AgentID: agentID})
		require.NoError(t, err)
		_, err = h.s.RunOnce(h.ctx)
		require.NoError(t, err)
		return c
	}
	finish := func(c engine.Claimed) {
		t.Helper()
		_, err := h.eng.Complete(h.ctx, c.Mission.Fence(), domain.WorkerResult{Status: agent.StatusCompleted, Summary: "done"})
		require.NoError(t, err)
	}
	captain1, captain2 := claim("captain-1"), claim("captain-2")
	var got []string
	got = append(got, captain1.Mission.Title, captain2.Mission.Title)
	for i := 0; i < 3; i++ { // each time a captain finishes, it claims the next mission
		finish(captain1)
		captain1, captain2 = captain2, claim("captain-1")
		got = append(got, captain2.Mission.Title)
	}
	require.Equal(t, armadaOrder, got, "claims")
	require.Equal(t, armadaOrder, acquireOrder(t, h, titles), "lease.acquired events")
	// reopened by the claims (completed, when both of its missions already landed)
	require.Contains(t, []domain.VoyageState{domain.VoyageActive, domain.VoyageCompleted}, h.voyageState(voyageID))
}

// Issue 13 item 6, managed mode: the same scenario run by two managed reference agents that
// a scheduler starts after the voyage was blocked for want of an agent.
func TestArmadaScenario_ManagedAfterAPause(t *testing.T) {
	grace := 300 * time.Millisecond
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.Profiles = nil; c.UnclaimedGrace = grace }))
	voyageID, titles := armadaScenario(t, h)
	pauseUntilBlocked(h, voyageID)
	require.NoError(t, h.s.Stop(h.ctx))
	one, two := refProfile("captain-1", "implementer"), refProfile("captain-2", "implementer")
	one.MaxConcurrency, two.MaxConcurrency = 1, 1
	var err error
	h.s, err = scheduler.New(h.eng, h.wt, h.run, scheduler.Config{DataDir: h.data, Tick: 50 * time.Millisecond,
		MaxConcurrency: 2, CleanupEvery: -1, UnclaimedGrace: grace, Profiles: []agent.Profile{one, two}})
	require.NoError(t, err)
	h.until("every mission lands", func() bool {
		for id := range titles {
			if h.mission(id).Landing != domain.LandingLanded {
				return false
			}
		}
		return true
	})
	require.Equal(t, armadaOrder, acquireOrder(t, h, titles))
	require.Equal(t, domain.VoyageCompleted, h.voyageState(voyageID))
}
