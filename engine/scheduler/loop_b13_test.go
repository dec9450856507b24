package scheduler_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// crashSchedulerCmd makes the test binary a scheduler process that SIGKILLs itself at one
// step of its first dispatch (see crashSchedulerProcess).
const crashSchedulerCmd = "crash-scheduler"

// crashLeaderLease is the leader lease of the crashing process: the next one takes over
// this long after the crash.
const crashLeaderLease = time.Second

// crashSchedulerProcess runs a scheduler over the harness's data dir and repository and ends
// itself with SIGKILL — no deferred function, no flush, as a crash would — when its dispatch
// reaches stage.
func crashSchedulerProcess(data, repo, stage string) int {
	ctx := context.Background()
	st, err := teststore.Open(ctx, teststore.LocationIn(data))
	if err != nil {
		return 10
	}
	eng := engine.New(st, engine.Options{DefaultRepository: repo, LeaseTTL: 20 * time.Second})
	wt, err := worktree.NewManager(worktree.Config{DataDir: data})
	if err != nil {
		return 11
	}
	self, _ := os.Executable()
	run, err := runner.New(runner.Config{Self: self, DataDir: data})
	if err != nil {
		return 12
	}
	s, err := scheduler.New(eng, wt, run, scheduler.Config{DataDir: data, Tick: 50 * time.Millisecond,
		LeaderLease: crashLeaderLease, Profiles: []agent.Profile{refProfile("ref", "implementer")}})
	if err != nil {
		return 13
	}
	scheduler.SetCrashPoint(s, func(at string) {
		if at == stage {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // SIGKILL is delivered before this returns
		}
	})
	if err := s.Start(ctx); err != nil {
		return 14
	}
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent gives up (closes stdin) or goes
	return 3                             // the crash point was never reached
}

// TestB13_CrashInsideDispatchIsRecovered (shared/cases B13): the scheduler process is killed
// with SIGKILL between each two steps of the claim-and-launch sequence — after the acquire,
// after the workspace, after the agent started, after the mission was marked running, after
// the run record — and the next process to lead finds the mission: not launched yet → given
// back and run again (the attempt is recorded as released, no budget spent); launched → the
// agent is re-attached in the workspace it was started in and its work lands, once.
func TestB13_CrashInsideDispatchIsRecovered(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	for _, stage := range []string{"acquired", "prepared", "launched", "started", "recorded"} {
		t.Run(stage, func(t *testing.T) {
			h := newHarness(t)
			m := h.create(engine.MissionSpec{Title: "b13 " + stage, WriteArea: []string{"b13.txt"},
				Brief: "@heartbeat 100ms\n@sleep 300ms\n@write b13.txt \"b13\\n\"\n@commit b13 work\n@done"})
			child := exec.Command(self, crashSchedulerCmd, h.data, h.repo, stage)
			var out testenv.SyncBuffer
			child.Stdout, child.Stderr = &out, &out
			release, err := child.StdinPipe()
			require.NoError(t, err)
			require.NoError(t, child.Start())
			exited := make(chan error, 1)
			go func() { exited <- child.Wait() }()
			t.Cleanup(func() { _ = release.Close() }) // a child that never crashed returns 3
			err, _ = testenv.ReceiveState(t, "the scheduler process to crash at "+stage, exited, out.String)
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "the child crashed: %v %s", err, out.String())
			require.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal(), "killed at %s: %s", stage, out.String())

			crashed := h.mission(m.ID)
			require.Equal(t, 1, crashed.Attempt)
			require.True(t, crashed.State.Leased(), "the crash left the mission %s", crashed.State)
			launched := stage != "acquired" && stage != "prepared"

			h.until("the next leader lands the mission", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })
			d, err := h.eng.GetMission(h.ctx, m.ID)
			require.NoError(t, err)
			body, ok := h.file("b13.txt")
			require.True(t, ok)
			require.Equal(t, "b13\n", body)
			require.Equal(t, 1, countLines(git(t, h.repo, "log", "--format=%s", "main"), "b13 work"), "landed once")
			agents, _ := filepath.Glob(filepath.Join(h.data, "attempts", m.ID, "a*", runner.FilePID))
			require.Len(t, agents, 1, "one agent launched in all")
			if launched {
				require.Equal(t, 1, d.Mission.Attempt, "re-attached, not run again")
				require.Len(t, d.Landings, 1)
				require.Equal(t, 1, d.Landings[0].Attempt)
			} else {
				require.Equal(t, 2, d.Mission.Attempt, "given back, then run again")
				require.Equal(t, domain.OutcomeReleased, d.Attempts[0].Outcome)
				require.True(t, strings.Contains(d.Attempts[0].Summary, "before launching"), d.Attempts[0].Summary)
				require.Equal(t, 2, d.Landings[0].Attempt)
			}
		})
	}
}
