package e2e

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// rateWindow is a scripted usage window: every model request is refused (429 and the unified
// headers) until each of the missions has been refused at least once and hold has passed since
// the last of them first was (a loaded machine starts agents late: the window must not open
// before they all met it and waited for it); from then on requests write the mission's file, the file of the mission
// whose worktree (…/<mission id>/a<N>) the request names.
type rateWindow struct {
	mu       sync.Mutex
	hold     time.Duration
	files    map[string]string // mission id → file
	refused  map[string]bool
	first    time.Time // the first refusal
	allMet   time.Time // when the last mission met its first refusal
	openedAt time.Time
}

func (w *rateWindow) script(r *modelserver.Request) modelserver.Turn {
	id := filepath.Base(filepath.Dir(r.Workspace()))
	w.mu.Lock()
	now := time.Now()
	if w.openedAt.IsZero() {
		if w.first.IsZero() {
			w.first = now
		}
		if len(w.refused) < len(w.files) || now.Sub(w.allMet) < w.hold {
			w.refused[id] = true
			if len(w.refused) == len(w.files) && w.allMet.IsZero() {
				w.allMet = now
			}
			w.mu.Unlock()
			return modelserver.RateLimited(now.Add(w.hold))
		}
		w.openedAt = now
	}
	f, ok := w.files[id]
	w.mu.Unlock()
	if !ok {
		return modelserver.Turn{Err: &modelserver.APIError{Status: 500, Message: "modelserver: no file for mission " + id}}
	}
	return modelserver.WriteFile(f, "written after the window by "+id+"\n", perTurn)(r)
}

func (w *rateWindow) opened() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.openedAt
}

// TestRealClaude_RateLimitWindowPausesTheProfileThenAllLand is issue 15's check with the
// real Claude Code: a voyage of four missions against a model whose usage window is rejected
// for the first seconds. Claude Code (API key, its own retries off) reports each refusal as a
// 429 rate_limit error with no reset time, so the profile backs off: nothing fails, no retry
// budget is spent, every mission says "profile claude rate-limited until …" while it waits,
// and all four resume by themselves and land.
func TestRealClaude_RateLimitWindowPausesTheProfileThenAllLand(t *testing.T) {
	srv := modelserver.Start(t)
	win := &rateWindow{hold: 12 * time.Second, files: map[string]string{}, refused: map[string]bool{}}
	srv.Script(func(*modelserver.Request) modelserver.Turn {
		return modelserver.Turn{Err: &modelserver.APIError{Status: 500, Message: "modelserver: not scripted yet"}}
	})
	h := newLoopHarnessWith(t, []agent.Profile{claudeProfile(t, srv)}, func(c *scheduler.Config) {
		c.RateLimit = engine.RatePolicy{Margin: time.Second, BackoffInitial: 10 * time.Second, BackoffMax: 20 * time.Second}
	}, "ANTHROPIC_API_KEY="+apiKey)
	spec := engine.VoyageSpec{Title: "four under a rate limit"}
	for _, k := range []string{"a", "b", "c", "d"} {
		spec.Missions = append(spec.Missions, engine.MissionSpec{Key: k, Title: "write " + k, Brief: "Create " + k + ".txt.",
			WriteArea: []string{k + ".txt"}})
	}
	srv.Script(func(*modelserver.Request) modelserver.Turn {
		return modelserver.RateLimited(time.Now().Add(5 * time.Second))
	})
	d := h.dispatch(spec)
	win.mu.Lock()
	for k, id := range d.IDs {
		win.files[id] = k + ".txt"
	}
	win.mu.Unlock()
	srv.Script(win.script)

	// While the window is rejected every mission, when it waits, says why.
	said := map[string]string{}
	counted := 0 // the most missions status counted as waiting for the window
	h.until("every mission was held for the rate limit", func() bool {
		sum, err := h.eng.Summary(h.ctx, 0)
		require.NoError(t, err)
		counted = max(counted, sum.Waiting[engine.WhyRateLimited])
		for _, id := range d.IDs {
			for _, r := range h.mission(id).WhyNotRunning {
				if r.Code == engine.WhyRateLimited {
					said[id] = r.Message
				}
			}
			if _, ok := said[id]; !ok { // a short hold between two polls: the leader logged it
				if m := heldLine(h.logs.String(), id); m != "" {
					said[id] = m
				}
			}
		}
		return len(said) == len(d.IDs) || h.settled(d.Voyage.ID)
	})
	require.Len(t, said, len(d.IDs), "each mission said why it waits: %v", said)
	for id, msg := range said {
		require.True(t, strings.HasPrefix(msg, "profile claude rate-limited until "), "%s: %s", id, msg)
		require.Contains(t, msg, "reset time unknown, reported by mission ", "%s: %s", id, msg)
		require.Contains(t, msg, "on profile claude: backoff step ", "%s: %s", id, msg)
	}
	require.Positive(t, counted, "status counts the missions waiting for the window")

	h.until("the voyage settles", func() bool { return h.settled(d.Voyage.ID) })
	require.Equal(t, domain.VoyageCompleted, h.voyage(d.Voyage.ID).Voyage.State, dumpMissions(h.ctx, h.eng))
	for k, id := range d.IDs {
		m := h.mission(id)
		require.Equal(t, domain.StateCompleted, m.Mission.State, k)
		require.Equal(t, domain.LandingLanded, m.Mission.Landing, k)
		require.Equal(t, 0, m.Mission.AttemptsUsed, "%s: a rejected window spends no retry budget", k)
		require.GreaterOrEqual(t, len(m.Attempts), 2, k)
		for _, a := range m.Attempts[:len(m.Attempts)-1] {
			require.Equal(t, domain.OutcomeFailed, a.Outcome, k)
			require.Equal(t, agent.KindRateLimit, a.Failure.Kind, "%s: the attempt says why it ended", k)
			require.Contains(t, a.Failure.Summary, "the model provider's rate limit was hit (HTTP 429 rate_limit_error)", k)
		}
		last := m.Attempts[len(m.Attempts)-1]
		require.Equal(t, domain.OutcomeCompleted, last.Outcome, k)
		require.False(t, last.StartedAt.Before(win.first), "%s: the last attempt began after the window was met", k)
		body, ok := showFile(t, h.repo, "main", k+".txt")
		require.True(t, ok, "%s.txt landed on main", k)
		require.Equal(t, "written after the window by "+id+"\n", body)
	}
	ws, err := h.eng.RateWindows(h.ctx)
	require.NoError(t, err)
	require.Empty(t, ws, "the completions lifted the window")
	// Every refused request was answered 429 before the window opened; none after.
	open := win.opened()
	require.False(t, open.IsZero())
	for _, r := range srv.ModelRequests(modelserver.Anthropic) {
		if r.Reply.Err != nil {
			require.Equal(t, 429, r.Reply.Err.Status)
			require.True(t, r.At.Before(open))
		}
	}
}

// heldLine returns the reason of the scheduler's first "mission held" log line that holds
// mission id as rate_limited ("" when there is none).
func heldLine(log, id string) string {
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, `msg="mission held" mission_id=`+id+` reason_code=rate_limited`) {
			continue
		}
		_, r, ok := strings.Cut(l, ` reason="`)
		if !ok {
			continue
		}
		r, _, _ = strings.Cut(r, `" was=`)
		return r
	}
	return ""
}
