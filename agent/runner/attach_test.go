package runner

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

func attach(t testing.TB, r *Runner, s Spec) *Process {
	t.Helper()
	p, err := r.Attach(t.Context(), s)
	require.NoError(t, err)
	return p
}

// detach detaches p as a scheduler going down would; the test waits at its end until the
// old shim (still a child of the test process) was reaped, so no later test sees it as a
// zombie.
func detach(t testing.TB, p *Process) {
	t.Helper()
	p.Detach()
	t.Cleanup(func() { testenv.Receive(t, "the detached agent's shim to exit", p.shimDone) })
}

func waitFile(t testing.TB, path string) {
	t.Helper()
	testenv.WaitFor(t, path+" to appear", func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

func TestAttach_RunningAgentEventsContinueAfterRestart(t *testing.T) {
	data := t.TempDir()
	r1 := newRunner(t, data)
	s := refSpec(t, r1, "reattach", t.TempDir(), "@log info phase one\n@sleep 800ms\n@log info phase two\n@done")
	p1 := launch(t, r1, s)
	evs := waitEvent(t, p1, func(ev Event) bool { return ev.Message.Message == "phase one" })
	offset := evs[len(evs)-1].Offset
	detach(t, p1) // the scheduler goes down; the agent runs on
	require.True(t, p1.Wait().Detached)
	require.NoError(t, r1.Close())

	r2 := newRunner(t, data)
	s.FromOffset = offset
	p2 := attach(t, r2, s)
	require.Equal(t, p1.PID(), p2.PID())
	evs2, out := collect(t, p2)
	require.Equal(t, []string{"message:task.log phase two", "message:worker.result"}, summarize(evs2))
	require.Equal(t, agent.StatusCompleted, out.Result.Status)
	require.True(t, out.Exit.Known)
	require.Equal(t, 0, out.Exit.Code)
}

func TestAttach_FinishedWhileDownOutcomeFromExitRecord(t *testing.T) {
	data := t.TempDir()
	r1 := newRunner(t, data)
	s := refSpec(t, r1, "down", t.TempDir(), "@log info working\n@sleep 200ms\n@fail test two tests failed")
	p1 := launch(t, r1, s)
	detach(t, p1)
	waitFile(t, filepath.Join(s.AttemptDir, FileExit))

	r2 := newRunner(t, data)
	evs, out := collect(t, attach(t, r2, s))
	require.Equal(t, []string{"message:task.log working", "message:worker.result"}, summarize(evs))
	require.Equal(t, agent.StatusFailed, out.Result.Status)
	require.Equal(t, agent.KindTest, out.Result.Failure.Kind)
	require.True(t, out.Exit.Known)
	require.Equal(t, 1, out.Exit.Code)
}

func TestAttach_LostAgentHasUnknownExit(t *testing.T) {
	data := t.TempDir()
	r1 := newRunner(t, data)
	s := refSpec(t, r1, "lost", t.TempDir(), "@log info ready\n@hang")
	p1 := launch(t, r1, s)
	waitEvent(t, p1, func(ev Event) bool { return ev.Message.Message == "ready" })
	detach(t, p1)
	// Everything dies at once, shim included: nobody records the end.
	rec := p1.Record()
	require.NoError(t, syscall.Kill(rec.ShimPID, syscall.SIGKILL))
	require.NoError(t, signalGroup(rec.PGID, syscall.SIGKILL))
	testenv.WaitFor(t, "the agent's group and its shim to be gone", func() bool {
		return groupGone(rec.PGID) && !alive(rec.ShimPID, rec.ShimStart)
	})

	r2 := newRunner(t, data)
	evs, out := collect(t, attach(t, r2, s))
	require.Equal(t, []string{"message:task.log ready"}, summarize(evs))
	require.False(t, out.Exit.Known)
	require.Equal(t, agent.StatusFailed, out.Result.Status)
	require.Equal(t, agent.KindCrash, out.Result.Failure.Kind)
}

func TestAttach_StopSignalsTheGroupOfAReattachedAgent(t *testing.T) {
	data := t.TempDir()
	r1 := newRunner(t, data)
	s := refSpec(t, r1, "stopafter", t.TempDir(), "@spawn-grandchild\n@log info ready\n@hang")
	p1 := launch(t, r1, s)
	evs := waitEvent(t, p1, func(ev Event) bool { return ev.Message.Message == "ready" })
	pids := grandchildPIDs(t, evs)
	detach(t, p1)

	r2 := newRunner(t, data)
	p2 := attach(t, r2, s)
	require.NoError(t, p2.Stop(ReasonLeaseLost))
	requireGone(t, p2.PID(), pids...)
	_, out := collect(t, p2)
	require.Equal(t, ReasonLeaseLost, out.Exit.Reason)
	require.True(t, out.Exit.Known)
	require.Equal(t, agent.StatusCancelled, out.Result.Status, "SIGTERM reached the agent: %+v", out.Result)
	// The old shim is still a child of this test process (a real restart would have
	// re-parented it): it is reaped once it exits, after writing exit.json.
	<-p1.shimDone
	requireNoZombieChildren(t)
}

// A shim killed from outside while this Runner watches: the agent is ended too, so the
// mission is never handed on while it runs, and the end is unknown.
func TestLaunch_ShimKilledTakesTheAgentDown(t *testing.T) {
	r := newRunner(t, "")
	p := launch(t, r, refSpec(t, r, "shimkill", t.TempDir(), "@spawn-grandchild\n@log info ready\n@hang"))
	evs := waitEvent(t, p, func(ev Event) bool { return ev.Message.Message == "ready" })
	require.NoError(t, syscall.Kill(p.Record().ShimPID, syscall.SIGKILL))
	_, out := collect(t, p)
	require.False(t, out.Exit.Known)
	requireGone(t, p.PID(), grandchildPIDs(t, evs)...)
	require.Equal(t, agent.StatusFailed, out.Result.Status)
	require.Equal(t, agent.KindCrash, out.Result.Failure.Kind)
}
