package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// An ndjson agent silent past its stall threshold is pinged; the reference agent answers
// agent.ping with agent.heartbeat, which is output, so the silence ends and it is never
// stopped although it sleeps far past its stall timeout: a ping that gets an answer proves
// the agent alive (agents of the current protocol keep working).
func TestStall_AnsweredPingKeepsAgentRunning(t *testing.T) {
	r := newRunner(t, "")
	s := refSpec(t, r, "pinged", t.TempDir(), "@log info one\n@sleep 2s\n@done slept")
	s.Profile.StallThreshold = agent.Duration(300 * time.Millisecond)
	s.Profile.StallTimeout = agent.Duration(900 * time.Millisecond)
	evs, out := collect(t, launch(t, r, s))
	require.Equal(t, agent.StatusCompleted, out.Result.Status, summarize(evs))
	require.Empty(t, out.Exit.Reason, "not stopped")
	stalled, pong := -1, -1
	for i, ev := range evs {
		if ev.Kind == EventStalled && stalled < 0 {
			require.False(t, ev.FromAgent(), "a stall is no proof of life")
			require.GreaterOrEqual(t, ev.Idle, 300*time.Millisecond)
			stalled = i
		}
		if ev.Kind == EventMessage && ev.Message.Type == agent.TypeHeartbeat && ev.Message.Message == "pong 1" {
			pong = i
		}
	}
	require.GreaterOrEqual(t, stalled, 0, "the silence was reported: %v", summarize(evs))
	require.Greater(t, pong, stalled, "the ping was answered after the stall: %v", summarize(evs))
}

// A wedged agent (alive, deaf to agent.ping) is reported stalled once per silence, then stopped when its
// silence reaches the stall timeout, through its process group within the grace; the
// Outcome carries its last output.
func TestStall_DeafAgentStoppedAtStallTimeoutWithItsLastOutput(t *testing.T) {
	r := newRunner(t, "")
	s := refSpec(t, r, "deaf", t.TempDir(), "@log info working on step 3\n@deaf\n@hang")
	s.Profile.StallThreshold = agent.Duration(300 * time.Millisecond)
	s.Profile.StallTimeout = agent.Duration(1200 * time.Millisecond)
	start := time.Now()
	p := launch(t, r, s)
	evs, out := collect(t, p)
	require.Equal(t, ReasonStalled, out.Exit.Reason, summarize(evs))
	require.GreaterOrEqual(t, time.Since(start), 1200*time.Millisecond, "not before the stall timeout")
	// One report per silence: exactly one after its last line (a slow start before its first
	// line is a silence of its own).
	stalls, spoke := 0, false
	for _, ev := range evs {
		if ev.Kind == EventMessage && ev.Message.Message == "working on step 3" {
			spoke = true
		}
		if ev.Kind == EventStalled && spoke {
			stalls++
		}
		require.False(t, ev.Kind == EventMessage && ev.Message.Type == agent.TypeHeartbeat, "a deaf agent answers nothing")
	}
	require.Equal(t, 1, stalls, "one report per silence: %v", summarize(evs))
	require.Contains(t, out.OutputTail, `"working on step 3"`)
	require.True(t, strings.HasSuffix(out.OutputTail, "\n"))
	requireGone(t, p.PID())
}

func TestStallWatch_PingOncePerSilenceStopAtTimeout(t *testing.T) {
	w := newStallWatch(10*time.Second, 20*time.Second)
	t0 := time.Unix(1000, 0)
	require.Equal(t, stallNone, w.check(t0, 5*time.Second))
	require.Equal(t, stallPing, w.check(t0, 10*time.Second))
	require.Equal(t, stallNone, w.check(t0, 15*time.Second), "the same silence is pinged once")
	t1 := t0.Add(16 * time.Second) // the agent spoke, then went silent again
	require.Equal(t, stallPing, w.check(t1, 11*time.Second))
	require.Equal(t, stallStop, w.check(t1, 20*time.Second))
	require.Nil(t, newStallWatch(0, 0).next(0))
	require.Equal(t, stallNone, newStallWatch(0, 0).check(t0, time.Hour))
}

func TestProfile_StallTimeoutDefaultsAndIsChecked(t *testing.T) {
	p := agent.Profile{Name: "p", Runtime: agent.RuntimeNDJSON, Command: []string{"x"}}.WithDefaults()
	require.Equal(t, agent.Duration(agent.DefaultStall), p.StallThreshold)
	require.Equal(t, agent.Duration(2*agent.DefaultStall), p.StallTimeout)
	p.StallTimeout = agent.Duration(time.Minute)
	require.ErrorContains(t, p.Validate(), "profile p: stall_timeout 1m0s is shorter than stall_threshold 10m0s")
	p.StallTimeout, p.HardTimeout = 0, agent.Duration(-time.Second)
	require.ErrorContains(t, p.Validate(), "profile p: hard_timeout -1s must not be negative")
}
