package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// An ndjson agent silent past its stall threshold is pinged; the reference agent answers
// agent.ping with agent.heartbeat, which is output, so the silence ends and it is never
// stopped although it sleeps far past its stall timeout: a ping that gets an answer proves
// the agent alive (agents of the current protocol keep working).
//
// The answer must come within the stall timeout less the threshold. On a loaded machine (load
// 50) a pong took longer than 600 ms and the agent was rightly stopped: such a run says
// nothing about answered pings, so it is repeated with both durations doubled (and the agent
// sleeping twice the timeout) until a run's pongs came in time. An agent whose answers never
// count is stopped in every run and fails at the test's deadline.
func TestStall_AnsweredPingKeepsAgentRunning(t *testing.T) {
	r := newRunner(t, "")
	var (
		evs []Event
		out Outcome
	)
	for i, threshold := 0, 300*time.Millisecond; ; i, threshold = i+1, 2*threshold {
		timeout := 3 * threshold
		s := refSpec(t, r, fmt.Sprintf("pinged-%d", i), t.TempDir(), fmt.Sprintf("@log info one\n@sleep %v\n@done slept", 2*timeout))
		s.Profile.StallThreshold = agent.Duration(threshold)
		s.Profile.StallTimeout = agent.Duration(timeout)
		evs, out = collect(t, launch(t, r, s))
		if out.Exit.Reason != ReasonStalled {
			break
		}
		require.Less(t, timeout, time.Until(testenv.WaitDeadline(t))/8, "stopped as stalled in every run although it answers pings: %s", summarize(evs))
		t.Logf("stopped as stalled with threshold %v and timeout %v (a pong later than %v): again with both doubled", threshold, timeout, timeout-threshold)
	}
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
//
// The silence counts from the launch until the agent's first line: on a loaded machine (load
// 50) the agent took longer than the 1.2 s timeout to print it, and was rightly stopped before
// it spoke. Such a run says nothing about a silence after output; it is repeated with both
// durations doubled until the agent spoke before it was stopped.
func TestStall_DeafAgentStoppedAtStallTimeoutWithItsLastOutput(t *testing.T) {
	r := newRunner(t, "")
	var (
		evs     []Event
		out     Outcome
		p       *Process
		timeout time.Duration
		took    time.Duration
	)
	for i, threshold := 0, 300*time.Millisecond; ; i, threshold = i+1, 2*threshold {
		timeout = 4 * threshold
		s := refSpec(t, r, fmt.Sprintf("deaf-%d", i), t.TempDir(), "@log info working on step 3\n@deaf\n@hang")
		s.Profile.StallThreshold = agent.Duration(threshold)
		s.Profile.StallTimeout = agent.Duration(timeout)
		start := time.Now()
		p = launch(t, r, s)
		evs, out = collect(t, p)
		took = time.Since(start)
		require.Equal(t, ReasonStalled, out.Exit.Reason, summarize(evs))
		if len(logsContaining(evs, "working on step 3")) > 0 {
			break
		}
		require.Less(t, timeout, time.Until(testenv.WaitDeadline(t))/8, "the agent never spoke before its stall timeout: %s", summarize(evs))
		t.Logf("stopped with timeout %v before its first line: again with both durations doubled", timeout)
		requireGone(t, p.PID())
	}
	require.GreaterOrEqual(t, took, timeout, "not before the stall timeout")
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
