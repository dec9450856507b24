package scheduler_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// goroutinesIn counts the goroutines whose stack passes through fn (a function or method
// name as a stack trace prints it, e.g. "scheduler.(*supervisor).keep(").
func goroutinesIn(fn string) int { return testenv.GoroutinesIn(fn) }

// runningOnce waits until exactly one goroutine runs fn (a goroutine just created shows its
// function only once it was scheduled), then checks for a while that no second one appears.
func runningOnce(t *testing.T, fn string) {
	t.Helper()
	testenv.WaitFor(t, "a goroutine in "+fn, func() bool { return goroutinesIn(fn) > 0 })
	require.Never(t, func() bool { return goroutinesIn(fn) > 1 }, 200*time.Millisecond, 20*time.Millisecond,
		"one goroutine in %s", fn)
}

// The loops each service starts, as stack traces name them.
const (
	loopTick       = "scheduler.(*Scheduler).runLoop("
	loopLeader     = "scheduler.(*leadership).keep("
	loopSupervisor = "scheduler.(*supervisor).keep("
	goSupervise    = "scheduler.(*supervisor).supervise("
	goCleanupPass  = "scheduler.(*workspaces).pass("
)

// The Scheduler's Start is guarded: a second Start is ErrStarted and starts no second set
// of goroutines; Stop returns once every loop it started has returned, and a stopped
// scheduler does not start again.
func TestServices_SchedulerStartIsGuarded(t *testing.T) {
	h := newHarness(t)
	for _, fn := range []string{loopTick, loopLeader, loopSupervisor} {
		require.Zero(t, goroutinesIn(fn), "nothing runs before Start: %s", fn)
	}
	require.NoError(t, h.s.Start(h.ctx))
	require.ErrorIs(t, h.s.Start(h.ctx), scheduler.ErrStarted)
	for _, fn := range []string{loopTick, loopLeader, loopSupervisor} {
		runningOnce(t, fn) // one loop each, however many Starts
	}
	require.NoError(t, h.s.Stop(h.ctx))
	for _, fn := range []string{loopTick, loopLeader, loopSupervisor} {
		require.Zero(t, goroutinesIn(fn), "Stop returned after its loops did: %s", fn)
	}
	require.ErrorIs(t, h.s.Start(h.ctx), scheduler.ErrStarted, "a stopped scheduler does not start again")
	require.Zero(t, goroutinesIn(loopTick))
	require.NoError(t, h.s.Stop(h.ctx), "Stop twice is fine")
}

// Stop before Start is fine, for the Scheduler and for each service alone; and a service's
// own guarded Start refuses a second Start while it runs.
func TestServices_StopBeforeStartAndServiceStarts(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.s.Stop(h.ctx), "the scheduler stops before it started")
	h = newHarness(t)
	sup, lead := scheduler.SupervisorOf(h.s), scheduler.LeadershipOf(h.s)
	sup.Stop()
	require.NoError(t, lead.Stop(h.ctx))

	h = newHarness(t)
	sup, lead = scheduler.SupervisorOf(h.s), scheduler.LeadershipOf(h.s)
	require.NoError(t, lead.Start(h.ctx))
	require.ErrorIs(t, lead.Start(h.ctx), scheduler.ErrStarted)
	require.NoError(t, sup.Start(h.ctx))
	require.ErrorIs(t, sup.Start(h.ctx), scheduler.ErrStarted)
	runningOnce(t, loopLeader)
	runningOnce(t, loopSupervisor)
	require.Zero(t, goroutinesIn(loopTick), "a service's Start starts only its own loop")
	sup.Stop()
	require.Zero(t, goroutinesIn(loopSupervisor))
	require.Equal(t, 1, goroutinesIn(loopLeader), "stopping one service leaves the other running")
	require.NoError(t, lead.Stop(h.ctx))
	require.Zero(t, goroutinesIn(loopLeader))
}

// The leadership service alone: its step takes the lease, a second scheduler over the same
// data dir (its own store and engine, as another process has) follows, and Stop gives the
// lease up so the follower's next step leads at once.
func TestServices_LeadershipRunOnce(t *testing.T) {
	h := newHarness(t)
	st, err := teststore.Open(h.ctx, teststore.LocationIn(h.data))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	other, err := scheduler.New(engine.New(st, engine.Options{DefaultRepository: h.repo}), h.wt, h.run,
		scheduler.Config{DataDir: h.data, CleanupEvery: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, other.Stop(h.ctx)) })
	first, second := scheduler.LeadershipOf(h.s), scheduler.LeadershipOf(other)
	lead, err := first.RunOnce(h.ctx)
	require.NoError(t, err)
	require.True(t, lead)
	require.True(t, h.s.Leader())
	lead, err = second.RunOnce(h.ctx)
	require.NoError(t, err)
	require.False(t, lead, "one leader per data dir")
	require.Equal(t, scheduler.PhaseFollower, other.Phase())
	require.NoError(t, first.Stop(h.ctx))
	require.False(t, h.s.Leader())
	lead, err = second.RunOnce(h.ctx)
	require.NoError(t, err)
	require.True(t, lead, "the lease was given up, not left to expire")
}

// The supervisor's step alone stops an agent whose mission is no longer its own: the
// mission is cancelled and nothing but supervisor.RunOnce runs (no tick, no loop).
func TestServices_SupervisorRunOnceStopsALostAgent(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "long", WriteArea: []string{"s/**"}, Brief: "@heartbeat 100ms\n@sleep 60s\n@done"})
	sup := scheduler.SupervisorOf(h.s)
	h.until("its agent runs, supervised", func() bool {
		got := h.mission(m.ID)
		return got.State == domain.StateRunning && len(got.Run) > 0 && runPID(t, got) != 0 && sup.Supervises(m.ID)
	})
	pid := runPID(t, h.mission(m.ID))
	_, err := h.eng.Cancel(h.ctx, m.ID, "not needed", false, "test")
	require.NoError(t, err)
	require.True(t, processAlive(pid), "cancelling records the decision; stopping the agent is the supervisor's")
	h.waitFor("the supervisor to stop the agent", func() bool {
		require.NoError(t, sup.RunOnce(h.ctx))
		return !processAlive(pid) && !sup.Supervises(m.ID)
	})
	require.Equal(t, domain.StateCancelled, h.mission(m.ID).State)
}

// The recovery step alone re-attaches, after a restart, the agent an earlier scheduler
// left running, and hands it to the new scheduler's supervisor; once is enough (the next
// step of the same leadership re-attaches nothing).
func TestServices_RecoveryRunOnceReattaches(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "outlives its scheduler", WriteArea: []string{"r.txt"},
		Brief: "@heartbeat 100ms\n@sleep 1500ms\n@write r.txt \"r\\n\"\n@commit r\n@done r"})
	h.until("it runs", func() bool { return h.mission(m.ID).State == domain.StateRunning && len(h.mission(m.ID).Run) > 0 })
	require.NoError(t, h.s.Stop(h.ctx)) // the agent keeps working unwatched

	next, err := scheduler.New(h.eng, h.wt, h.run, scheduler.Config{DataDir: h.data, Tick: 50 * time.Millisecond,
		CleanupEvery: -1, Profiles: []agent.Profile{refProfile("ref", "implementer")}})
	require.NoError(t, err)
	h.s = next
	rec, sup := scheduler.RecoveryOf(next), scheduler.SupervisorOf(next)
	require.False(t, sup.Supervises(m.ID))
	rep, err := rec.RunOnce(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Recovered)
	require.Empty(t, rep.Reaped, "a re-attached agent's lease is renewed, not reaped")
	require.True(t, sup.Supervises(m.ID), "the supervisor owns the re-attached agent")
	rep, err = rec.RunOnce(h.ctx)
	require.NoError(t, err)
	require.Zero(t, rep.Recovered, "the re-attach pass ran once for this leadership")
	h.until("its work lands from attempt 1", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })
	require.Equal(t, 1, h.mission(m.ID).Attempt)
}

// The reaper, in the recovery step alone, gives back a mission whose pull-mode agent's lease
// expired: it is nobody's to supervise here, and the re-attach pass leaves it alone.
func TestServices_RecoveryRunOnceReaps(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "claimed from outside", WriteArea: []string{"e.txt"}})
	got, err := h.eng.Acquire(h.ctx, engine.AcquireRequest{AgentID: "outside", MissionID: m.ID, LeaseTTL: 100 * time.Millisecond})
	require.NoError(t, err)
	run, err := json.Marshal(scheduler.RunRecord{Mode: scheduler.ModePull, Attempt: got.Attempt, Agent: "outside"})
	require.NoError(t, err)
	require.NoError(t, h.eng.SetRun(h.ctx, got.Fence(), run, nil)) // what claim_mission records
	rec := scheduler.RecoveryOf(h.s)
	var reaped []string
	h.waitFor("the recovery step to reap the expired lease", func() bool {
		rep, err := rec.RunOnce(h.ctx)
		require.NoError(t, err)
		reaped = rep.Reaped
		return len(reaped) > 0
	})
	require.Equal(t, []string{m.ID}, reaped)
	require.False(t, h.mission(m.ID).State.Leased(), "given back")
}

// The workspace keeper alone: one scheduled pass prunes the finished history older than the
// retention (with its attempt directory) and removes the workspace of the landed mission.
func TestServices_KeeperRunOnce(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "lands", WriteArea: []string{"k.txt"}, Brief: "@write k.txt k\n@commit k\n@done"})
	h.until("it lands", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })
	ws := h.runRecord(m.ID).Worktree
	require.DirExists(t, ws.Path)
	wt, err := worktree.NewManager(worktree.Config{DataDir: h.data, Retention: time.Nanosecond})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, wt.Close()) })
	keeper := scheduler.NewKeeper(h.eng, wt, h.run, scheduler.Config{DataDir: h.data, Retention: time.Millisecond})
	time.Sleep(5 * time.Millisecond) // older than the retention

	rep, err := keeper.RunOnce(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, rep.History.Removed.Missions, "the landed mission's history is pruned")
	require.Equal(t, 1, rep.History.AttemptDirs)
	require.NoDirExists(t, filepath.Join(h.data, "attempts", m.ID))
	require.Len(t, rep.Repos, 1)
	require.Empty(t, rep.Repos[0].Error)
	require.Equal(t, 1, rep.Removed)
	require.NoDirExists(t, ws.Path, "its workspace goes with the same pass")
	body, ok := h.file("k.txt")
	require.True(t, ok)
	require.Equal(t, "k", body, "the landed work stays")
	keeper.Stop()
}

// The keeper's background pass is its own goroutine: Kick starts it when due (once however
// often kicked), and Stop interrupts it and returns after it did — here the pass waits for
// the repository's structural lock, which another holder keeps. A stopped keeper starts no
// pass.
func TestServices_KeeperStopWaitsForItsPass(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "lands", WriteArea: []string{"w.txt"}, Brief: "@write w.txt w\n@commit w\n@done"})
	h.until("it lands", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })
	repoID := h.runRecord(m.ID).Worktree.RepoID
	require.NotEmpty(t, repoID)
	lock := flock.New(filepath.Join(h.data, "locks", "repo-"+repoID+".lock"))
	held, err := lock.TryLock()
	require.NoError(t, err)
	require.True(t, held)
	defer func() { require.NoError(t, lock.Unlock()) }()

	keeper := scheduler.NewKeeper(h.eng, h.wt, h.run, scheduler.Config{DataDir: h.data, CleanupEvery: time.Hour})
	keeper.Kick()
	testenv.WaitFor(t, "the kicked pass to start", func() bool { return goroutinesIn(goCleanupPass) > 0 })
	keeper.Kick() // not due again for an hour, and one runs
	require.Equal(t, 1, goroutinesIn(goCleanupPass), "one pass however often kicked")
	keeper.Stop()
	require.Zero(t, goroutinesIn(goCleanupPass), "Stop interrupted the pass and waited for it")

	stopped := scheduler.NewKeeper(h.eng, h.wt, h.run, scheduler.Config{DataDir: h.data, CleanupEvery: time.Nanosecond})
	stopped.Stop()
	stopped.Kick()
	require.Zero(t, goroutinesIn(goCleanupPass), "no pass after Stop")
}

// The supervisor's Stop waits for what it started: with StopAgentsOnShutdown the agent it
// supervises is stopped, and when Stop returns its watcher goroutine is gone and so is the
// agent's process.
func TestServices_SupervisorStopWaitsForItsWatchers(t *testing.T) {
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.StopAgentsOnShutdown = true }))
	m := h.create(engine.MissionSpec{Title: "long", WriteArea: []string{"w/**"}, Brief: "@heartbeat 100ms\n@sleep 60s\n@done"})
	sup := scheduler.SupervisorOf(h.s)
	h.until("its agent runs, supervised", func() bool {
		got := h.mission(m.ID)
		// the watcher is registered before its goroutine runs: wait for both
		return got.State == domain.StateRunning && len(got.Run) > 0 && runPID(t, got) != 0 && sup.Supervises(m.ID) &&
			goroutinesIn(goSupervise) == 1
	})
	pid := runPID(t, h.mission(m.ID))
	require.NoError(t, h.s.Stop(h.ctx))
	require.Zero(t, goroutinesIn(goSupervise), "Stop returned after the watcher did")
	require.False(t, processAlive(pid), "the agent was stopped")
	require.False(t, sup.Supervises(m.ID))
}
