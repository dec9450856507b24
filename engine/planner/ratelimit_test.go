package planner_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

func paused(group string, until time.Time) engine.RateWindow {
	return engine.RateWindow{Group: group, Status: engine.RatePaused, Until: until, Why: "the window resets"}
}

func warned(group string, until time.Time) engine.RateWindow {
	return engine.RateWindow{Group: group, Status: engine.RateWarning, Until: until, Why: "nearly used up"}
}

func deadline(d time.Time) func(*domain.Mission) { return func(m *domain.Mission) { m.Deadline = d } }

// Issue 15: a rejected window pauses the profile (or its limit group), not the mission or
// the scheduler: its missions are held as rate_limited with the time they resume, another
// eligible profile still takes them, a warning halves concurrency, a deadline inside the
// window is escalated once, and the window ends by itself at Until.
func TestCompute_RateLimitWindows(t *testing.T) {
	t.Parallel()
	claudeA := planner.Profile{Name: "claude-a", Confidence: 0.9, MaxConcurrency: 4, LimitGroup: "anthropic"}
	claudeB := planner.Profile{Name: "claude-b", Confidence: 0.8, MaxConcurrency: 4, LimitGroup: "anthropic"}
	codex := planner.Profile{Name: "codex", Confidence: 0.5, MaxConcurrency: 4}
	until := t0.Add(20 * time.Second)
	cases := []struct {
		name     string
		profiles []planner.Profile
		windows  []engine.RateWindow
		cands    []domain.Mission
		run      []domain.Mission
		now      time.Time
		want     []string
		held     map[string]string // mission → code
		msg      string            // the first hold's message
		escalate []string
	}{
		{name: "a paused group holds every mission of its profiles", profiles: []planner.Profile{claudeA, claudeB},
			windows: []engine.RateWindow{paused("anthropic", until)}, cands: []domain.Mission{mission(1), mission(2)}, now: t0,
			want: []string{}, held: map[string]string{"m01": engine.WhyRateLimited, "m02": engine.WhyRateLimited},
			msg: "profile claude-a rate-limited until 2026-12-01T12:00:20Z, resumes by itself: the window resets; profile claude-b rate-limited until 2026-12-01T12:00:20Z, resumes by itself: the window resets"},
		{name: "another group's profile takes the work", profiles: []planner.Profile{claudeA, codex},
			windows: []engine.RateWindow{paused("anthropic", until)}, cands: []domain.Mission{mission(1), mission(2)}, now: t0,
			want: []string{"m01→codex", "m02→codex"}, held: map[string]string{}},
		{name: "a profile without limit_group is its own group", profiles: []planner.Profile{gen, codex},
			windows: []engine.RateWindow{paused("gen", until)}, cands: []domain.Mission{mission(1)}, now: t0,
			want: []string{"m01→codex"}, held: map[string]string{}},
		{name: "the window ends by itself at Until", profiles: []planner.Profile{claudeA},
			windows: []engine.RateWindow{paused("anthropic", until)}, cands: []domain.Mission{mission(1)}, now: until,
			want: []string{"m01→claude-a"}, held: map[string]string{}},
		{name: "a deadline inside the window is escalated", profiles: []planner.Profile{claudeA},
			windows: []engine.RateWindow{paused("anthropic", until)},
			cands:   []domain.Mission{mission(1, deadline(t0.Add(10*time.Second))), mission(2, deadline(t0.Add(time.Hour)))}, now: t0,
			want: []string{}, held: map[string]string{"m01": engine.WhyRateLimited, "m02": engine.WhyRateLimited},
			msg: "profile claude-a rate-limited until 2026-12-01T12:00:20Z, resumes by itself: the window resets", escalate: []string{"m01"}},
		{name: "a warning halves the profile's concurrency", profiles: []planner.Profile{claudeA},
			windows: []engine.RateWindow{warned("anthropic", until)}, cands: []domain.Mission{mission(1), mission(2), mission(3)}, now: t0,
			want: []string{"m01→claude-a", "m02→claude-a"}, held: map[string]string{"m03": engine.WhySlots},
			msg: "concurrency limit of profile claude-a (2/2, halved until 2026-12-01T12:00:20Z: its rate-limit window is nearly used up) reached"},
		{name: "a warning never takes a profile below one", profiles: []planner.Profile{{Name: "one", Confidence: 1, MaxConcurrency: 1}},
			windows: []engine.RateWindow{warned("one", until)}, cands: []domain.Mission{mission(1)}, now: t0,
			want: []string{"m01→one"}, held: map[string]string{}},
		{name: "running missions count against the halved cap", profiles: []planner.Profile{claudeA},
			windows: []engine.RateWindow{warned("anthropic", until)}, cands: []domain.Mission{mission(1)},
			run: []domain.Mission{mission(8, running("claude-a")), mission(9, running("claude-a"))}, now: t0,
			want: []string{}, held: map[string]string{"m01": engine.WhySlots},
			msg: "concurrency limit of profile claude-a (2/2, halved until 2026-12-01T12:00:20Z: its rate-limit window is nearly used up) reached"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := snap(c.cands, c.run...)
			s.RateWindows = map[string]engine.RateWindow{}
			for _, w := range c.windows {
				s.RateWindows[w.Group] = w
			}
			p := planner.Compute(s, c.now, lim, c.profiles)
			require.Equal(t, c.want, dispatched(p))
			require.Equal(t, c.held, heldCodes(p))
			require.Equal(t, len(c.cands), p.Runnable, "rate limits are the planner's holds: the runnable rule allows them")
			if c.msg != "" {
				r := p.Held[0].Reason
				require.Equal(t, c.msg, r.Message)
				if r.Code == engine.WhyRateLimited {
					require.Equal(t, until, r.Until, "the mission resumes at the window's end")
					require.True(t, r.Transient(), "a voyage waiting for a window is waiting, not stuck")
				}
			}
			var esc []string
			for _, e := range p.Escalate {
				esc = append(esc, e.MissionIDs[0])
				require.Equal(t, planner.KindRateLimitDeadline, e.Kind)
				require.Contains(t, e.Reason, "has deadline 2026-12-01T12:00:10Z, inside its rate-limit window: profile claude-a rate-limited until 2026-12-01T12:00:20Z")
			}
			require.Equal(t, c.escalate, esc)
		})
	}
}

// The hold survives RecordHolds' comparison only as long as the window stays the same: a
// later Until is a new hold (sameHold compares Until), so get_mission shows the new time.
func TestCompute_RateLimitedHoldNamesItsUntil(t *testing.T) {
	t.Parallel()
	s := snap([]domain.Mission{mission(1)})
	s.RateWindows = map[string]engine.RateWindow{"gen": paused("gen", t0.Add(time.Minute))}
	a := planner.Compute(s, t0, lim, []planner.Profile{gen})
	s.RateWindows = map[string]engine.RateWindow{"gen": paused("gen", t0.Add(2*time.Minute))}
	b := planner.Compute(s, t0, lim, []planner.Profile{gen})
	require.NotEqual(t, a.Held[0].Reason.Until, b.Held[0].Reason.Until)
	require.Contains(t, b.Held[0].Reason.Message, "until 2026-12-01T12:02:00Z")
}
