package scheduler_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// otherNode is another scheduler node (n2) on the harness's store, whose clock runs hours
// ahead of the harness's: past any lease the harness's agents hold and past retry backoffs.
type otherNode struct {
	t     *testing.T
	h     *harness
	clock *engine.FakeClock
	eng   *engine.Engine
}

func newOtherNode(t *testing.T, h *harness) *otherNode {
	clock := engine.NewFakeClock(time.Now().Add(time.Hour))
	return &otherNode{t: t, h: h, clock: clock, eng: engine.New(h.st, engine.Options{DefaultRepository: h.repo, Clock: clock})}
}

// reap reaps the expired leases, as the cluster's leader does, and requires id among them.
func (o *otherNode) reap(id string) {
	o.t.Helper()
	reaped, err := o.eng.ReapExpired(o.h.ctx, func(domain.Mission) bool { return false })
	require.NoError(o.t, err)
	require.Contains(o.t, reaped, id)
}

// acquire takes mission id's next attempt under node n2 (three hours later again) and
// returns the mission as n2 leased it.
func (o *otherNode) acquire(id string) domain.Mission {
	o.t.Helper()
	o.clock.Advance(3 * time.Hour)
	n2, err := o.eng.NodeLease(o.h.ctx, engine.NodeTake{Name: "n2", Owner: "n2-process", TTL: 24 * time.Hour})
	require.NoError(o.t, err)
	m, err := o.eng.Acquire(o.h.ctx, engine.AcquireRequest{AgentID: "ref", MissionID: id, LeaseTTL: 24 * time.Hour, Start: true,
		Node: &engine.NodeFence{Name: "n2", Owner: "n2-process", Epoch: n2.Epoch}})
	require.NoError(o.t, err)
	return m
}

// takeOver plays node n2 reaping mission id's expired lease and taking its next attempt.
func takeOver(t *testing.T, h *harness, id string) domain.Mission {
	t.Helper()
	o := newOtherNode(t, h)
	o.reap(id)
	m := o.acquire(id)
	require.Equal(t, 2, m.Attempt)
	return m
}

// logLine is the first line of logs containing msg ("" when none).
func logLine(logs *testenv.SyncBuffer, msg string) string {
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, msg) {
			return l
		}
	}
	return ""
}

// An agent whose mission another node took over (its lease expired, was reaped, and the next
// attempt leased to node n2 under a newer epoch) is stopped and its result not used — and the
// scheduler says so at warn: the mission, the attempt and epoch it held, the current epoch,
// attempt and owner node, and what becomes of its workspace.
func TestSupervisor_SupersededAttemptIsLoggedWithTheEpochs(t *testing.T) {
	var logs testenv.SyncBuffer
	h := newHarness(t, withConfig(func(c *scheduler.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}))
	cm, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "taken over", Brief: "@log info ready\n@hang"}, "test")
	require.NoError(t, err)
	id := cm.Mission.ID
	h.until("the agent runs", func() bool { return h.mission(id).State == domain.StateRunning })
	held := h.mission(id)

	now := takeOver(t, h, id)
	const msg = "superseded attempt: its lease is no longer the mission's"
	h.until("the superseded attempt's warning", func() bool { return logLine(&logs, msg) != "" })
	line := logLine(&logs, msg)
	for _, want := range []string{"level=WARN", "mission_id=" + id, "attempt=1", "held_epoch=" + itoa64(held.Lease.Epoch),
		"current_epoch=" + itoa64(now.Lease.Epoch), "current_attempt=2", "owner_node=n2", "worktree=", "worktree_fate="} {
		require.Contains(t, line, want, "the warning names %s:\n%s", want, line)
	}
	require.NotEqual(t, held.Lease.Epoch, now.Lease.Epoch)
}

// A node restarted after another node took its mission over finds its own earlier attempt
// (the agent it launched before it stopped) superseded: it neither re-attaches it nor
// collects its result, and says so at warn with the attempt, the epoch it held, the current
// epoch and owner node. An earlier attempt of another mission that ended with its own result
// (a failure, retried on n2) is not superseded and logs nothing.
func TestRecovery_RestartedNodeWarnsOfItsSupersededAttempt(t *testing.T) {
	var logs testenv.SyncBuffer
	cfg := func(c *scheduler.Config) {
		c.Node = "n1"
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	h := newHarness(t, func(e *engine.Options, c *scheduler.Config) {
		e.Backoff = engine.Backoff{Initial: time.Hour, Max: time.Hour} // n1 retries nothing while the test runs
		cfg(c)
	})
	cm, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "taken over while down", WriteArea: []string{"a.txt"}, Brief: "@log info ready\n@hang"}, "test")
	require.NoError(t, err)
	id := cm.Mission.ID
	failed, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "failed on its own", WriteArea: []string{"b.txt"}, Brief: "@fail error the first try fails"}, "test")
	require.NoError(t, err)
	h.until("the agent runs on n1 and the other attempt failed", func() bool {
		m, f := h.mission(id), h.mission(failed.Mission.ID)
		return m.State == domain.StateRunning && m.Node == "n1" && f.State == domain.StatePending && f.Attempt == 1
	})
	held := h.mission(id)
	require.NoError(t, h.s.Stop(h.ctx)) // the node stops; its agent goes on (detached)
	t.Cleanup(func() { stopAttempt(t, h, id, 1) })

	now := takeOver(t, h, id)
	require.Equal(t, 2, newOtherNode(t, h).acquire(failed.Mission.ID).Attempt)
	scfg := scheduler.Config{DataDir: h.data, Tick: 50 * time.Millisecond, MaxConcurrency: 4, CleanupEvery: -1,
		Profiles: []agent.Profile{refProfile("ref", "implementer", "reviewer", "debugger")}}
	cfg(&scfg)
	h.s, err = scheduler.New(h.eng, h.wt, h.run, scfg) // the node comes back (the harness stops it)
	require.NoError(t, err)
	const msg = "superseded attempt found on restart"
	h.until("the restarted node's warning", func() bool { return logLine(&logs, msg) != "" })
	line := logLine(&logs, msg)
	for _, want := range []string{"level=WARN", "mission_id=" + id, "attempt=1", "held_epoch=" + itoa64(held.Lease.Epoch),
		"node=n1", "current_epoch=" + itoa64(now.Lease.Epoch), "current_attempt=2", "owner_node=n2", "exit_recorded=false", "worktree_fate="} {
		require.Contains(t, line, want, "the warning names %s:\n%s", want, line)
	}
	require.Equal(t, 1, strings.Count(logs.String(), msg), "only the superseded attempt is warned of:\n%s", logs.String())
	require.NotContains(t, logs.String(), "re-attached agent", "a superseded attempt is not re-attached")

	// Its agent, still running (exit_recorded=false), is stopped: its result would be refused,
	// and it would spend tokens for nothing.
	dir, err := h.run.AttemptDir(id, 1)
	require.NoError(t, err)
	h.until("the stray agent is stopped (its shim records the exit)", func() bool {
		_, err := os.Stat(filepath.Join(dir, runner.FileExit))
		return err == nil
	})
	stop := logLine(&logs, "stopping an agent left running by an attempt that is not its mission's any more")
	for _, want := range []string{"level=WARN", "mission_id=" + id, "attempt=1", "current_attempt=2", "owner_node=n2"} {
		require.Contains(t, stop, want, "the stop names %s:\n%s", want, logs.String())
	}
	strays, err := h.run.Strays()
	require.NoError(t, err)
	require.Empty(t, strays, "no agent of this data dir runs unwatched")
}

// stopAttempt stops the agent of mission id's attempt k (left running by a test) and waits.
func stopAttempt(t *testing.T, h *harness, id string, k int) {
	dir, err := h.run.AttemptDir(id, k)
	require.NoError(t, err)
	ad, err := adapters.For(refProfile("ref").Runtime)
	require.NoError(t, err)
	p, err := h.run.Attach(context.Background(), runner.Spec{Adapter: ad, Profile: refProfile("ref"), AttemptDir: dir})
	require.NoError(t, err)
	require.NoError(t, p.Stop(runner.ReasonCancelled))
	p.Wait()
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
