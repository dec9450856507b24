package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// crashAfterRequestCmd makes the test binary a scheduler process that launches one reference
// agent and SIGKILLs itself right after asking the shim to start it (crashAfterRequestMain).
const crashAfterRequestCmd = "crash-after-launch-request"

// crashAfterRequestMain launches mission "early" (attempt 1) in data with workspace ws and
// dies with SIGKILL — no deferred function, no flush — as soon as the launch request is sent.
func crashAfterRequestMain(args []string) int {
	if len(args) != 2 {
		return 10
	}
	exe, err := os.Executable()
	if err != nil {
		return 11
	}
	r, err := New(Config{Self: exe, DataDir: args[0]})
	if err != nil {
		return 12
	}
	dir, err := r.AttemptDir("early", 1)
	if err != nil {
		return 13
	}
	afterLaunchRequest = func() {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL is delivered before this returns
	}
	_, err = r.Launch(context.Background(), Spec{Adapter: adapters.NDJSON{}, Profile: refProfile(), AttemptDir: dir,
		Request: agent.LaunchRequest{
			Start:     agent.Start{MissionID: "early", Attempt: 1, Epoch: 1, Title: "early", Brief: "@log info got my start\n@done", Workspace: args[1]},
			BriefFile: filepath.Join(args[1], ".mcp-scheduler", "brief.md"),
		}})
	if err != nil {
		return 14
	}
	return 3 // the crash point was never reached
}

// A scheduler killed right after asking the shim to start an agent, before anything more:
// the agent still reads its agent.start (it was in the pipe before the request) and runs its
// mission. It used to read EOF, exit 2 and have its attempt counted as a crash — what made
// the SIGKILL loop of e2e fail missions under load.
func TestLaunch_SchedulerKilledRightAfterTheLaunchRequestLeavesTheAgentItsStart(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	out, err := exec.Command(self(t), crashAfterRequestCmd, data, ws).CombinedOutput()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "the child crashed: %v %s", err, out)
	require.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal(), "killed after the launch request: %s", out)

	r := newRunner(t, data)
	dir, err := r.AttemptDir("early", 1)
	require.NoError(t, err)
	waitFile(t, filepath.Join(dir, FileExit))
	s := Spec{Adapter: adapters.NDJSON{}, Profile: refProfile(), AttemptDir: dir,
		Request: agent.LaunchRequest{Start: agent.Start{MissionID: "early", Attempt: 1, Epoch: 1}}}
	evs, res := collect(t, attach(t, r, s))
	require.Equal(t, []string{"message:task.log got my start", "message:worker.result"}, summarize(evs))
	require.Equal(t, agent.StatusCompleted, res.Result.Status, res.Result.Summary)
	require.Equal(t, 0, res.Exit.Code)
}

// pipeHolds grows a pipe to hold a message above the default 64 KiB buffer, so that the whole
// message is written before anyone reads.
func TestPipeHolds_GrowsTheBuffer(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	msg := make([]byte, 200<<10)
	require.True(t, pipeHolds(w, len(msg)))
	require.NoError(t, w.SetWriteDeadline(testenv.WaitDeadline(t)))
	n, err := w.Write(msg) // nobody reads yet: it fits the buffer or it would block
	require.NoError(t, err)
	require.Equal(t, len(msg), n)
}

// Briefs above the default pipe buffer (preloaded into a grown pipe) and above what a pipe
// may hold (sent by the stdin writer after the launch): the agent gets its agent.start
// either way and runs its script.
func TestLaunch_LargeStartMessagesReachTheAgent(t *testing.T) {
	for _, size := range []int{200 << 10, 2 << 20} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			r := newRunner(t, "")
			brief := "@log info got a large start\n@done\n" + strings.Repeat("prose that is not a directive\n", size/30)
			_, out := collect(t, launch(t, r, refSpec(t, r, "large", t.TempDir(), brief)))
			require.Equal(t, agent.StatusCompleted, out.Result.Status, out.Result.Summary)
			require.Equal(t, 0, out.Exit.Code)
		})
	}
}
