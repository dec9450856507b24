package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// A rate_limit failure puts the mission back to wait: no retry spent, no retry backoff (its
// profile's window holds it), the attempt's outcome says why, and the failure signature of
// the attempt before it stays, so a fault repeated across a rate limit still counts double.
func TestRetry_RateLimitSpendsNoBudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "limited", RetryBudget: budget(2), WriteArea: []string{"r/**"}})
	test := domain.Failure{Kind: "test", Tool: "go test", Summary: "TestX failed"}
	out := b.failRunning(m.ID, test)
	require.Equal(t, 1, out.AttemptsUsed)
	sig := out.LastSignature
	b.clock.Advance(time.Hour)
	for range 3 {
		out = b.failRunning(m.ID, domain.Failure{Kind: domain.FailureRateLimit, Tool: "claude-code",
			Summary: "the model provider's rate limit was hit (HTTP 429 rate_limit_error)"})
		require.Equal(t, domain.StatePending, out.State)
		require.Equal(t, 1, out.AttemptsUsed, "a rate limit spends no retry")
		require.Equal(t, domain.DecisionRetry, out.Decision.Kind)
		require.Contains(t, out.Decision.Reason, "no retry spent (1 of 2 used)")
		require.False(t, out.NotBefore.After(b.clock.Now()), "no retry backoff: the profile's window holds it")
		require.Equal(t, sig, out.LastSignature)
		require.Equal(t, domain.FailureRateLimit, out.LastFailure.Kind)
	}
	d, err := b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	last := d.Attempts[len(d.Attempts)-1]
	require.Equal(t, domain.OutcomeFailed, last.Outcome)
	require.Equal(t, domain.FailureRateLimit, last.Failure.Kind, "the attempt's outcome says why")
	out = b.failRunning(m.ID, test)
	require.Equal(t, 3, out.AttemptsUsed, "the same fault as before the rate limits counts double")
	b.verifyReplay()
}

func TestNextRateWindow(t *testing.T) {
	now := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	pol := engine.RatePolicy{Margin: 30 * time.Second}
	sig := func(l agent.RateLimit) engine.RateSignal {
		return engine.RateSignal{Group: "acct", Profile: "claude-a", MissionID: "m1", Limit: l}
	}
	rejected := agent.RateLimit{Status: agent.RateRejected}
	t.Run("a known reset pauses until it plus the margin", func(t *testing.T) {
		w, keep := engine.NextRateWindow(nil, sig(agent.RateLimit{Status: agent.RateRejected, ResetsAt: now.Add(20 * time.Second), LimitType: "five_hour"}), pol, now)
		require.True(t, keep)
		require.Equal(t, engine.RatePaused, w.Status)
		require.Equal(t, now.Add(50*time.Second), w.Until)
		require.Equal(t, 0, w.Steps)
		require.Equal(t, "the window resets at 2026-12-01T18:00:20Z, reported by mission m1 on profile claude-a, plus rate_limit_margin 30s", w.Why)
		r := engine.RateLimitedReason("claude-a", w)
		require.Equal(t, engine.WhyRateLimited, r.Code)
		require.Equal(t, "profile claude-a rate-limited until 2026-12-01T18:00:50Z, resumes by itself: "+w.Why, r.Message)
		require.True(t, r.Transient())
	})
	t.Run("a completed attempt that ran before a known pause does not lift it; one begun after does", func(t *testing.T) {
		paused, _ := engine.NextRateWindow(nil, sig(agent.RateLimit{Status: agent.RateRejected, ResetsAt: now.Add(time.Minute)}), pol, now)
		room := sig(agent.RateLimit{Status: agent.RateAllowed})
		room.CompletedStarted = now.Add(-time.Second) // running when the window was rejected
		w, keep := engine.NextRateWindow(&paused, room, pol, now.Add(10*time.Second))
		require.True(t, keep, "the pause the provider gave stands")
		require.Equal(t, paused, w)
		room.CompletedStarted = now.Add(5 * time.Second) // began after the pause (another limit group's grace, a resolve)
		_, keep = engine.NextRateWindow(&paused, room, pol, now.Add(10*time.Second))
		require.False(t, keep)
		_, keep = engine.NextRateWindow(&paused, sig(agent.RateLimit{Status: agent.RateAllowed}), pol, now.Add(10*time.Second))
		require.False(t, keep, "an allowed the agent reported lifts it")
		guessed, _ := engine.NextRateWindow(nil, sig(rejected), pol, now) // a backoff step: its end is a guess
		room.CompletedStarted = now.Add(-time.Second)
		_, keep = engine.NextRateWindow(&guessed, room, pol, now.Add(time.Second))
		require.False(t, keep, "a completion lifts a guessed pause")
	})
	t.Run("retry-after pauses for the hint plus the margin", func(t *testing.T) {
		w, _ := engine.NextRateWindow(nil, sig(agent.RateLimit{Status: agent.RateRejected, RetryAfterSeconds: 7.5}), pol, now)
		require.Equal(t, now.Add(37500*time.Millisecond), w.Until)
	})
	t.Run("unknown resets back off exponentially, capped, with jitter, each step recorded", func(t *testing.T) {
		var prev *engine.RateWindow
		at := now
		var delays []time.Duration
		for step := 1; step <= 8; step++ {
			w, keep := engine.NextRateWindow(prev, sig(rejected), pol, at)
			require.True(t, keep)
			require.Equal(t, step, w.Steps)
			require.Contains(t, w.Why, "reset time unknown, reported by mission m1 on profile claude-a: backoff step")
			d := w.Until.Sub(at)
			delays = append(delays, d)
			require.LessOrEqual(t, d, 5*time.Minute, "capped at 5 min")
			require.GreaterOrEqual(t, d, 12*time.Second)
			again, _ := engine.NextRateWindow(&w, sig(rejected), pol, at.Add(time.Second))
			require.Equal(t, w, again, "another rejection while the pause is on takes no step")
			prev, at = &w, w.Until.Add(time.Second)
		}
		require.Less(t, delays[0], 19*time.Second)
		require.Greater(t, delays[2], 47*time.Second, "doubling: 15 s, 30 s, 60 s …")
		require.GreaterOrEqual(t, delays[7], 4*time.Minute, "at the cap, less its jitter")
	})
	t.Run("a weaker signal never shortens a pause", func(t *testing.T) {
		w, _ := engine.NextRateWindow(nil, sig(agent.RateLimit{Status: agent.RateRejected, ResetsAt: now.Add(time.Hour)}), pol, now)
		w2, _ := engine.NextRateWindow(&w, sig(agent.RateLimit{Status: agent.RateRejected, RetryAfterSeconds: 5}), pol, now.Add(time.Second))
		require.Equal(t, w, w2)
	})
	t.Run("allowed lifts; a warning lasts until the reset or WarningFor", func(t *testing.T) {
		w, _ := engine.NextRateWindow(nil, sig(rejected), pol, now)
		_, keep := engine.NextRateWindow(&w, sig(agent.RateLimit{Status: agent.RateAllowed}), pol, now)
		require.False(t, keep)
		warn, keep := engine.NextRateWindow(nil, sig(agent.RateLimit{Status: agent.RateWarning, ResetsAt: now.Add(time.Hour)}), pol, now)
		require.True(t, keep)
		require.Equal(t, engine.RateWarning, warn.Status)
		require.Equal(t, now.Add(time.Hour), warn.Until)
		warn, _ = engine.NextRateWindow(nil, sig(agent.RateLimit{Status: agent.RateWarning}), pol, now)
		require.Equal(t, now.Add(5*time.Minute), warn.Until)
	})
}

// RecordRateLimit stores the window, writes an event when it changes (none when a report
// changes nothing), and removes it when the group has room.
func TestRecordRateLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sig := engine.RateSignal{Group: "acct", Profile: "claude-a", MissionID: "m1",
		Limit: agent.RateLimit{Status: agent.RateRejected, ResetsAt: b.clock.Now().Add(time.Minute)}}
	w, changed, err := b.e.RecordRateLimit(b.ctx, sig, engine.RatePolicy{})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, b.clock.Now().Add(90*time.Second).UnixMilli(), w.Until.UnixMilli(), "default margin 30 s")
	_, changed, err = b.e.RecordRateLimit(b.ctx, sig, engine.RatePolicy{})
	require.NoError(t, err)
	require.False(t, changed, "the same report again changes nothing")
	ws, err := b.e.RateWindows(b.ctx)
	require.NoError(t, err)
	require.Equal(t, w.Until.UnixMilli(), ws["acct"].Until.UnixMilli())
	sig.Limit = agent.RateLimit{Status: agent.RateAllowed}
	w, changed, err = b.e.RecordRateLimit(b.ctx, sig, engine.RatePolicy{})
	require.NoError(t, err)
	require.True(t, changed)
	require.Empty(t, w.Status)
	ws, err = b.e.RateWindows(b.ctx)
	require.NoError(t, err)
	require.Empty(t, ws)
	evs, err := b.e.Events(b.ctx, engine.EventFilter{Limit: 100})
	require.NoError(t, err)
	var types []string
	for _, e := range evs {
		if e.Type == "profile.rate_limited" || e.Type == "profile.rate_cleared" {
			types = append(types, e.Type)
		}
	}
	require.ElementsMatch(t, []string{"profile.rate_limited", "profile.rate_cleared"}, types)
}
