package scheduler_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

func withConfig(f func(*scheduler.Config)) option {
	return func(_ *engine.Options, c *scheduler.Config) { f(c) }
}

// why returns the first reason get_mission gives for a mission ("" when none).
func (h *harness) why(id string) engine.Reason {
	d, err := h.eng.GetMission(h.ctx, id)
	require.NoError(h.t, err)
	if len(d.WhyNotRunning) == 0 {
		return engine.Reason{}
	}
	return d.WhyNotRunning[0]
}

// Issue 11 item 2: a mission that requires capabilities runs on the profile that offers them
// (the targeted acquire presents the profile's capabilities), and one that no profile can
// take says so instead of waiting in silence.
func TestLoop_CapabilitiesRouteToTheProfileThatOffersThem(t *testing.T) {
	gop := refProfile("gopher", "implementer")
	gop.Capabilities = []string{"go"}
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.Profiles = []agent.Profile{gop} }))
	ok, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "needs go", Capabilities: []string{"go"},
		WriteArea: []string{"go.txt"}, Brief: "@write go.txt go\n@commit go\n@done"}, "test")
	require.NoError(t, err)
	none, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "needs rust", Capabilities: []string{"rust"},
		WriteArea: []string{"rust.txt"}, Brief: "@done"}, "test")
	require.NoError(t, err)
	h.until("the go mission lands", func() bool { return h.mission(ok.Mission.ID).Landing == domain.LandingLanded })
	require.Equal(t, "gopher", h.mission(ok.Mission.ID).Profile)
	r := h.why(none.Mission.ID)
	require.Equal(t, engine.WhyWaitingAgent, r.Code, "%+v", r)
	require.Contains(t, r.Message, "no agent profile offers capabilities rust")
	require.False(t, r.Since.IsZero())
}

// Issue 11 item 1 and "the defaults never stall": a resource gate that is always short (more
// free memory asked than any machine has) reduces concurrency to one agent at a time, never
// to zero, and every mission held by it says so — in get_mission, in status's counts per
// reason and in one info log line per change.
func TestLoop_ResourceGateReducesConcurrencyNeverStallsAndSaysWhy(t *testing.T) {
	var logs testenv.SyncBuffer
	h := newHarness(t, withConfig(func(c *scheduler.Config) {
		c.Resources = scheduler.Resources{MinFreeMemMB: 1 << 40}
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}))
	var ids []string
	for _, f := range []string{"a", "b", "c"} {
		m, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "m " + f, WriteArea: []string{f + ".txt"},
			Brief: "@sleep 300ms\n@write " + f + ".txt " + f + "\n@commit " + f + "\n@done"}, "test")
		require.NoError(t, err)
		ids = append(ids, m.Mission.ID)
	}
	sawResources, sawCount := false, false
	h.until("every mission lands", func() bool {
		leased, err := h.eng.Leased(h.ctx)
		require.NoError(t, err)
		require.LessOrEqual(t, len(leased), 1, "the gate lets one agent run at a time")
		for _, id := range ids {
			d, err := h.eng.GetMission(h.ctx, id)
			require.NoError(t, err)
			if d.Mission.State == domain.StateCompleted {
				// a completed mission waits to land (the landing part of the plan), never for resources
				for _, r := range d.WhyNotRunning {
					require.True(t, domain.IsLandingWait(r.Code), "%+v", r)
				}
				continue
			}
			if len(d.WhyNotRunning) > 0 {
				r := d.WhyNotRunning[0]
				require.Contains(t, []string{engine.WhyResources, engine.WhyQueued}, r.Code, "%+v", r)
				if r.Code == engine.WhyResources {
					require.Contains(t, r.Message, "min_free_memory_mb")
					sawResources = true
				}
			}
		}
		if s, err := h.eng.Summary(h.ctx, 0); err == nil && s.Waiting[engine.WhyResources] > 0 {
			sawCount = true
		}
		for _, id := range ids {
			if h.mission(id).Landing != domain.LandingLanded {
				return false
			}
		}
		return true
	})
	require.True(t, sawResources, "a held mission said it waits for resources")
	require.True(t, sawCount, "status counted the missions held by resources")
	out := logs.String()
	require.Contains(t, out, "mission held")
	require.Contains(t, out, "reason_code=resources")
	for _, id := range ids[1:] {
		// one line when the hold began, not one per tick (the hold's reason is stable)
		n := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "mission held") && strings.Contains(l, "mission_id="+id) && strings.Contains(l, "reason_code=resources") {
				n++
			}
		}
		require.LessOrEqual(t, n, 2, "log lines for %s:\n%s", id, out)
	}
}

// Issue 11: a voyage that waits for pull-mode agents is waiting, not deadlocked. With no
// profile, it stays active and each mission says it waits for an agent to claim it; past the
// grace period the voyage blocks with a no_agent report (never a deadlock), and a mission
// without a voyage gets one no_agent escalation, not raised again by a new leader.
func TestLoop_NoProfileWaitsForAnAgentThenEscalatesNoAgent(t *testing.T) {
	grace := 1500 * time.Millisecond
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.Profiles = nil; c.UnclaimedGrace = grace }))
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "pull", Missions: []engine.MissionSpec{
		{Key: "x", Title: "for a claimer", WriteArea: []string{"x"}}}}, "test")
	require.NoError(t, err)
	solo, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "solo", Capabilities: []string{"gpu"}, WriteArea: []string{"s"}}, "test")
	require.NoError(t, err)
	start := time.Now()
	for i := 0; i < 3; i++ {
		_, err := h.s.RunOnce(h.ctx)
		require.NoError(t, err)
	}
	if time.Since(start) < grace { // on a very slow machine the grace may already be over
		require.NotEqual(t, domain.VoyageBlocked, h.voyageState(d.Voyage.ID))
		r := h.why(d.IDs["x"])
		require.Equal(t, engine.WhyWaitingAgent, r.Code, "%+v", r)
		require.Contains(t, r.Message, "no agent profile is configured")
	}
	h.until("the voyage blocks after the grace period", func() bool { return h.voyageState(d.Voyage.ID) == domain.VoyageBlocked })
	vs, err := h.eng.VoyageStatus(h.ctx, d.Voyage.ID)
	require.NoError(t, err)
	require.Len(t, vs.Escalations, 1)
	require.Equal(t, engine.KindNoAgent, vs.Escalations[0].Kind)
	require.Equal(t, engine.WhyUnavailable, h.why(d.IDs["x"]).Code)

	h.until("the solo mission is escalated", func() bool { return len(h.openEscalations(solo.Mission.ID, engine.KindNoAgent)) == 1 })
	require.Contains(t, h.openEscalations(solo.Mission.ID, engine.KindNoAgent)[0].Reason, "no agent offers capabilities gpu")
	// a new leader (the same store, a new scheduler) does not raise it again
	require.NoError(t, h.s.Stop(h.ctx))
	s2, err := scheduler.New(h.eng, h.wt, h.run, scheduler.Config{DataDir: h.data, CleanupEvery: -1, UnclaimedGrace: grace})
	require.NoError(t, err)
	defer func() { require.NoError(t, s2.Stop(h.ctx)) }()
	for i := 0; i < 3; i++ {
		rep, err := s2.RunOnce(h.ctx)
		require.NoError(t, err)
		require.True(t, rep.Leader)
	}
	require.Len(t, h.openEscalations(solo.Mission.ID, engine.KindNoAgent), 1)
	// an agent claims it: the escalation closes at the next planning step
	_, err = h.eng.CancelVoyage(h.ctx, d.Voyage.ID, "only the solo mission is claimed", "test")
	require.NoError(t, err)
	c, err := s2.Pull().Claim(h.ctx, engine.ClaimRequest{AgentID: "gpu-box", Capabilities: []string{"gpu"}})
	require.NoError(t, err)
	require.Equal(t, solo.Mission.ID, c.Mission.ID)
	_, err = s2.RunOnce(h.ctx)
	require.NoError(t, err)
	require.Empty(t, h.openEscalations(solo.Mission.ID, engine.KindNoAgent))
}

func (h *harness) openEscalations(missionID, kind string) []domain.Escalation {
	escs, err := h.eng.Escalations(h.ctx, engine.EscalationFilter{State: domain.EscalationOpen, MissionID: missionID})
	require.NoError(h.t, err)
	var out []domain.Escalation
	for _, e := range escs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// Issue 11: a deliberate pause is a hold that ends by itself, never a deadlock.
func TestLoop_PauseHoldsWithoutBlockingTheVoyage(t *testing.T) {
	h := newHarness(t)
	err := h.eng.SetPaused(h.ctx, true, "test", "test")
	require.NoError(t, err)
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "paused", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a.txt"}, Brief: "@write a.txt a\n@commit a\n@done"}}}, "test")
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		_, err := h.s.RunOnce(h.ctx)
		require.NoError(t, err)
	}
	require.NotEqual(t, domain.VoyageBlocked, h.voyageState(d.Voyage.ID))
	vs, err := h.eng.VoyageStatus(h.ctx, d.Voyage.ID)
	require.NoError(t, err)
	require.Empty(t, vs.Escalations, "no deadlock report for a pause")
	require.Equal(t, engine.WhyPaused, vs.Missions[0].Why[0].Code)
	err = h.eng.SetPaused(h.ctx, false, "test", "test")
	require.NoError(t, err)
	h.until("it lands after resume", func() bool { return h.mission(d.IDs["a"]).Landing == domain.LandingLanded })
}

// get_mission says that no loop runs when no scheduler leads, instead of nothing.
func TestWhyNotRunning_NoLeader(t *testing.T) {
	h := newHarness(t)
	m, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "queued from a shell", WriteArea: []string{"q"}}, "test")
	require.NoError(t, err)
	r := h.why(m.Mission.ID)
	require.Equal(t, engine.WhyNoLeader, r.Code, "%+v", r)
	require.Contains(t, r.Message, "mcp-scheduler serve")
}
