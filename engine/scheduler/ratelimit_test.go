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

// A reference agent reports a rejected window resetting 2 s ahead, then fails with kind
// rate_limit. The profile (one slot) pauses until the reset plus the margin: both missions of
// the voyage are held as "profile ref rate-limited until T", no retry budget is spent, and
// both start again at T by themselves — the loop's period and the leader lease are an hour
// here, so only the wake at the reset can start them — and land.
func TestRateLimit_ProfilePausesUntilTheResetThenResumes(t *testing.T) {
	h := newHarness(t, func(_ *engine.Options, c *scheduler.Config) {
		c.Tick, c.LeaderLease = time.Hour, time.Hour
		c.RateLimit = engine.RatePolicy{Margin: time.Second}
		c.Profiles[0].MaxConcurrency = 1
	})
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "under a window", Missions: []engine.MissionSpec{
		{Key: "a", Title: "hits the window", WriteArea: []string{"a.txt"},
			Brief: "@rate-limited 1 2s \"You've hit your limit\"\n@write a.txt \"from a\\n\"\n@commit add a\n@done wrote a"},
		{Key: "b", Title: "waits for it", WriteArea: []string{"b.txt"}, Brief: "@write b.txt \"from b\\n\"\n@commit add b\n@done wrote b"},
	}}, "test")
	require.NoError(t, err)
	require.NoError(t, h.s.Start(h.ctx))
	a, b := d.IDs["a"], d.IDs["b"]

	var window engine.RateWindow
	said := map[string]string{}
	h.waitFor("both missions held for the window", func() bool {
		ws, err := h.eng.RateWindows(h.ctx)
		require.NoError(t, err)
		if w, ok := ws["ref"]; ok {
			window = w
		}
		for _, id := range []string{a, b} {
			md, err := h.eng.GetMission(h.ctx, id)
			require.NoError(t, err)
			for _, r := range md.WhyNotRunning {
				if r.Code == engine.WhyRateLimited {
					said[id] = r.Message
				}
			}
		}
		return len(said) == 2
	})
	require.Equal(t, engine.RatePaused, window.Status)
	require.Equal(t, "five_hour", window.LimitType)
	require.Equal(t, window.ResetsAt.Add(time.Second), window.Until, "the reset plus the margin")
	want := "profile ref rate-limited until " + window.Until.UTC().Format(time.RFC3339) + ", resumes by itself: the window resets at " +
		window.ResetsAt.UTC().Format(time.RFC3339) + ", reported by mission " + a + " on profile ref, plus rate_limit_margin 1s"
	require.Equal(t, map[string]string{a: want, b: want}, said)

	h.waitFor("the voyage completes", func() bool {
		v, err := h.eng.VoyageStatus(h.ctx, d.Voyage.ID)
		require.NoError(t, err)
		return v.Voyage.State == domain.VoyageCompleted
	})
	ma, err := h.eng.GetMission(h.ctx, a)
	require.NoError(t, err)
	require.Equal(t, 0, ma.Mission.AttemptsUsed, "the rejected window spent no retry")
	require.Len(t, ma.Attempts, 2)
	require.Equal(t, agent.KindRateLimit, ma.Attempts[0].Failure.Kind)
	require.Equal(t, "You've hit your limit", ma.Attempts[0].Summary)
	require.Contains(t, ma.Mission.Decision.Reason, "rate-limited")
	mb, err := h.eng.GetMission(h.ctx, b)
	require.NoError(t, err)
	require.Len(t, mb.Attempts, 1)
	for _, at := range []time.Time{ma.Attempts[1].StartedAt, mb.Attempts[0].StartedAt} {
		require.False(t, at.Before(window.Until.Truncate(time.Millisecond)), "started at %s, before the window ended at %s", at, window.Until)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		body, ok := h.file(f)
		require.True(t, ok, f)
		require.True(t, strings.HasPrefix(body, "from "), body)
	}
	ws, err := h.eng.RateWindows(h.ctx)
	require.NoError(t, err)
	require.Empty(t, ws, "the completions lifted the window")
}
