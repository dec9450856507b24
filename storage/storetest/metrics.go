package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseMetrics covers MetricCounts: what a metrics scrape reads of the stored rows.
func exerciseMetrics(t *testing.T, open Opener) {
	group(t, "MetricCounts", func(t *testing.T) {
		run(t, "Empty", open, func(t *testing.T, e *env) {
			c := metricCounts(e)
			require.Empty(t, nonZero(c.Missions))
			require.Empty(t, c.Voyages)
			require.Empty(t, c.Holds)
			require.Empty(t, c.Landings)
			require.Empty(t, c.Live)
			require.Zero(t, c.OpenEscalations)
		})
		run(t, "CountsLiveWorkOnly", open, func(t *testing.T, e *env) {
			seedMetrics(e)
			c := metricCounts(e)
			require.Equal(t, map[domain.MissionState]int{domain.StatePending: 2, domain.StateInterrupted: 1,
				domain.StateLeased: 1, domain.StateRunning: 2, domain.StateCompleted: 5, domain.StateFailed: 1}, nonZero(c.Missions))
			require.Equal(t, map[domain.VoyageState]int{domain.VoyageOpen: 1, domain.VoyageActive: 1}, c.Voyages)
			require.Equal(t, map[string]int{engine.WhyConflict: 2, domain.LandWaitApproval: 1}, nonZero(c.Holds),
				"holds of missions that moved on (running, landed) are not counted")
			require.Equal(t, map[domain.LandingState]int{domain.LandingPending: 1, domain.LandingReview: 1,
				domain.LandingApproval: 1}, nonZero(c.Landings), "landed and left landings are settled")
			require.Equal(t, map[string]int{"claude": 2, "codex": 1}, nonZero(c.Live))
			require.Equal(t, 1, c.OpenEscalations, "a resolved escalation is not open")
		})
		run(t, "AgreesWithTheOtherCounts", open, func(t *testing.T, e *env) {
			seedMetrics(e)
			c := metricCounts(e)
			e.view(func(r engine.Reader) error {
				missions, err := r.MissionCounts(e.ctx)
				require.NoError(t, err)
				require.Equal(t, nonZero(missions), nonZero(c.Missions))
				holds, err := r.HoldCounts(e.ctx)
				require.NoError(t, err)
				require.Equal(t, nonZero(holds), nonZero(c.Holds))
				voyages, err := r.VoyageCounts(e.ctx)
				require.NoError(t, err)
				require.Equal(t, nonZero(voyages), c.Voyages)
				open, err := r.EscalationCount(e.ctx, domain.EscalationOpen)
				require.NoError(t, err)
				require.Equal(t, open, c.OpenEscalations)
				return nil
			})
		})
		run(t, "FollowsTransitions", open, func(t *testing.T, e *env) {
			e.add("p1", func(m *domain.Mission) { m.Profile = "claude" })
			hold(e, "p1", engine.WhyConflict)
			require.Equal(t, map[string]int{engine.WhyConflict: 1}, nonZero(metricCounts(e).Holds))
			e.set("p1", func(m *domain.Mission) { m.State, m.Lease.Epoch, m.Attempt = domain.StateRunning, 1, 1 })
			c := metricCounts(e)
			require.Equal(t, map[string]int{"claude": 1}, nonZero(c.Live))
			require.Empty(t, nonZero(c.Holds), "a hold left from before the start is not counted")
			e.set("p1", func(m *domain.Mission) { m.State, m.Landing = domain.StateCompleted, domain.LandingPending })
			c = metricCounts(e)
			require.Empty(t, nonZero(c.Live))
			require.Equal(t, map[domain.LandingState]int{domain.LandingPending: 1}, nonZero(c.Landings))
			e.set("p1", func(m *domain.Mission) { m.Landing = domain.LandingLanded })
			require.Empty(t, nonZero(metricCounts(e).Landings))
		})
	})
}

// seedMetrics stores missions in every kind of state, with holds, voyages and escalations.
func seedMetrics(e *env) {
	e.t.Helper()
	e.voyage("v-open")
	e.voyage("v-active", func(v *domain.Voyage) { v.State = domain.VoyageActive })
	e.add("p1")
	e.add("p2")
	e.add("i1", inState(domain.StateInterrupted))
	e.add("l1", inState(domain.StateLeased), live("claude"))
	e.add("r1", inState(domain.StateRunning), live("claude"))
	e.add("r2", inState(domain.StateRunning), live("codex"))
	for id, l := range map[string]domain.LandingState{"c-pending": domain.LandingPending, "c-review": domain.LandingReview,
		"c-approval": domain.LandingApproval, "c-landed": domain.LandingLanded, "c-left": domain.LandingLeft} {
		e.add(id, inState(domain.StateCompleted), func(m *domain.Mission) { m.Landing = l })
	}
	e.add("f1", inState(domain.StateFailed))
	hold(e, "p1", engine.WhyConflict)
	hold(e, "i1", engine.WhyConflict)
	hold(e, "r1", engine.WhyBackoff)
	hold(e, "c-approval", domain.LandWaitApproval)
	hold(e, "c-landed", domain.LandWaitQueued)
	e.escalation("x-open")
	e.escalation("x-done", func(x *domain.Escalation) {
		x.State, x.Resolution, x.ResolvedBy, x.ResolvedAt = domain.EscalationResolved, "done", "main_agent", e.next()
	})
}

// live makes a mission leased by profile (epoch and attempt 1).
func live(profile string) func(*domain.Mission) {
	return func(m *domain.Mission) {
		m.Profile, m.Attempt, m.Lease = profile, 1, domain.Lease{Owner: profile, Epoch: 1, ExpiresAt: t0.Add(time.Minute)}
	}
}

func metricCounts(e *env) engine.MetricCounts {
	e.t.Helper()
	var c engine.MetricCounts
	e.view(func(r engine.Reader) error {
		var err error
		c, err = r.MetricCounts(e.ctx)
		return err
	})
	return c
}
