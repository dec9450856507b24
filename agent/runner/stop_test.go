package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/refagent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

func TestStop_HangStoppedByHardTimeout(t *testing.T) {
	r := newRunner(t, "")
	var (
		p   *Process
		evs []Event
		out Outcome
	)
	// The hard timeout counts from the start, whatever the agent is doing. On a loaded machine
	// a race-enabled agent can still be starting when it fires, before it handles SIGTERM (the
	// default action kills it: exit -1). Such a run says nothing about how a hanging agent is
	// stopped; it is repeated with a longer timeout until the agent had said "hanging".
	for i, hard := 0, 500*time.Millisecond; ; i, hard = i+1, 2*hard {
		s := refSpec(t, r, fmt.Sprintf("hang-%d", i), t.TempDir(), "@log info hanging\n@hang")
		s.Profile.HardTimeout = agent.Duration(hard)
		p = launch(t, r, s)
		evs, out = collect(t, p)
		require.Equal(t, ReasonHardTimeout, out.Exit.Reason)
		if len(logsContaining(evs, "hanging")) > 0 {
			break
		}
		require.Less(t, hard, time.Until(testenv.WaitDeadline(t))/4, "the agent never started its script: %s", summarize(evs))
		t.Logf("hard timeout %v fired before the agent started its script (exit %+v); again with %v", hard, out.Exit, 2*hard)
		requireGone(t, p.PID())
	}
	require.True(t, out.Exit.Known)
	// The reference agent honours agent.cancel (exit 0) and SIGTERM (exit 143), whichever
	// it sees first, reporting cancelled.
	require.Contains(t, []int{refagent.ExitOK, refagent.ExitTerminated}, out.Exit.Code)
	require.Empty(t, out.Exit.Signal)
	require.Equal(t, agent.StatusCancelled, out.Result.Status)
	require.NotEmpty(t, logsContaining(evs, "hanging"))
	requireGone(t, p.PID())
	requireNoZombieChildren(t)
}

func TestStop_CancelEndsAgentWithCancelledResult(t *testing.T) {
	r := newRunner(t, "")
	p := launch(t, r, refSpec(t, r, "cancel", t.TempDir(), "@log info ready\n@hang"))
	evs := waitEvent(t, p, func(ev Event) bool { return ev.Message.Message == "ready" })
	require.NoError(t, p.Stop(ReasonCancelled))
	requireGone(t, p.PID())
	more, out := collect(t, p)
	evs = append(evs, more...)
	require.Equal(t, ReasonCancelled, out.Exit.Reason)
	require.Equal(t, agent.StatusCancelled, out.Result.Status)
	// agent.cancel or SIGTERM, whichever the agent saw first, ended it within the grace.
	require.Contains(t, out.Result.Summary, "cancelled")
	require.NotEqual(t, "SIGKILL", out.Exit.Signal)
	require.Len(t, messages(evs, agent.TypeResult), 1)
	// Stopping again, or after the end, does nothing.
	require.NoError(t, p.Stop(ReasonLeaseLost))
	require.Equal(t, ReasonCancelled, p.Wait().Exit.Reason)
}

func TestStop_IgnoredSigtermIsFollowedBySigkillAfterGrace(t *testing.T) {
	r := newRunner(t, "")
	s := refSpec(t, r, "stubborn", t.TempDir(), "@ignore-sigterm\n@log info ready\n@hang")
	s.Profile.Grace = agent.Duration(500 * time.Millisecond)
	p := launch(t, r, s)
	waitEvent(t, p, func(ev Event) bool { return ev.Message.Message == "ready" })

	began := time.Now()
	require.NoError(t, p.Stop(ReasonLeaseLost))
	took := time.Since(began)
	requireGone(t, p.PID())
	require.GreaterOrEqual(t, took, 500*time.Millisecond, "SIGKILL must wait for the grace period")
	require.Less(t, took, 500*time.Millisecond+5*time.Second, "Stop must return soon after the grace period")

	evs, out := collect(t, p)
	require.Equal(t, "SIGKILL", out.Exit.Signal)
	require.Equal(t, -1, out.Exit.Code)
	require.Equal(t, ReasonLeaseLost, out.Exit.Reason)
	require.NotEmpty(t, logsContaining(evs, "ignoring"), summarize(evs))
	// No result, stopped because the lease was lost: the attempt ends cancelled.
	require.Equal(t, agent.StatusCancelled, out.Result.Status)
	requireNoZombieChildren(t)
}

// B27: grandchildren share the agent's process group and die with it; Wait never blocks on
// them.
func TestB27_GrandchildrenKilledWithTheGroup(t *testing.T) {
	r := newRunner(t, "")
	p := launch(t, r, refSpec(t, r, "gc", t.TempDir(), "@spawn-grandchild 3\n@log info spawned\n@hang"))
	evs := waitEvent(t, p, func(ev Event) bool { return ev.Message.Message == "spawned" })
	pids := grandchildPIDs(t, evs)
	require.Len(t, pids, 3)
	for _, pid := range pids {
		_, _, err := procStart(pid)
		require.NoError(t, err, "grandchild %d should run", pid)
	}
	require.NoError(t, p.Stop(ReasonCancelled))
	requireGone(t, p.PID(), pids...)
	_, out := collect(t, p)
	require.Equal(t, ReasonCancelled, out.Exit.Reason)
	requireNoZombieChildren(t)
}

// B27: a shell wrapper that starts the real agent in the background and then sleeps; a
// cancel ends all of them, and waiting does not hang on the sleeper.
func TestB27_ShellWrapperWithBackgroundAgentStopped(t *testing.T) {
	sh, err := os.Stat("/bin/sh")
	if err != nil || sh.IsDir() {
		t.Skip("no /bin/sh")
	}
	r := newRunner(t, "")
	s := refSpec(t, r, "wrap", t.TempDir(), "@log info ready\n@hang")
	// Profile commands come from configuration; a wrapper script is a legitimate one.
	s.Profile.Command = []string{"/bin/sh", "-c", `exec 3<&0; "$0" reference-agent <&3 & sleep 600`, "{mcp_scheduler}"}
	p := launch(t, r, s)
	waitEvent(t, p, func(ev Event) bool { return ev.Message.Message == "ready" })
	began := time.Now()
	require.NoError(t, p.Stop(ReasonCancelled))
	require.Less(t, time.Since(began), 10*time.Second)
	requireGone(t, p.PID())
	_, out := collect(t, p)
	require.True(t, out.Exit.Known)
	require.Equal(t, ReasonCancelled, out.Exit.Reason)
	requireNoZombieChildren(t)
}

// B27: an agent that exits by itself leaving a background process behind: the shim ends
// what is left of the group before it records the exit.
func TestB27_LeftoverGrandchildEndedAfterAgentExits(t *testing.T) {
	r := newRunner(t, "")
	s := refSpec(t, r, "leftover", t.TempDir(), "@spawn-grandchild\n@done")
	evs, out := collect(t, launch(t, r, s))
	require.Equal(t, agent.StatusCompleted, out.Result.Status)
	pids := grandchildPIDs(t, evs)
	require.Len(t, pids, 1)
	requireGone(t, pids[0], pids...)
}

func TestStop_StallStopsSilentAgent(t *testing.T) {
	r := newRunner(t, "")
	// @deaf: an agent that answers agent.ping is not silent (stall_test.go).
	s := refSpec(t, r, "stall", t.TempDir(), "@log info one\n@deaf\n@hang")
	s.Profile.StallThreshold = agent.Duration(400 * time.Millisecond)
	_, out := collect(t, launch(t, r, s))
	require.Equal(t, ReasonStalled, out.Exit.Reason)
}

func TestStdinEOF_DoesNotStopNDJSONAgent(t *testing.T) {
	r := newRunner(t, "")
	ws := t.TempDir()
	p := launch(t, r, refSpec(t, r, "eof", ws, "@log info started\n@sleep 300ms\n@write after-eof.txt still here\n@done"))
	waitEvent(t, p, func(ev Event) bool { return ev.Message.Message == "started" })
	p.stdin.close() // as when the scheduler goes away
	_, out := collect(t, p)
	require.Equal(t, agent.StatusCompleted, out.Result.Status)
	require.Equal(t, 0, out.Exit.Code)
	b, err := os.ReadFile(filepath.Join(ws, "after-eof.txt"))
	require.NoError(t, err)
	require.Equal(t, "still here", strings.TrimSpace(string(b)))
}
