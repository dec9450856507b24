package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// Phases the scheduler reports in status (design brief issue 6).
const (
	PhaseIdle       = "idle"
	PhaseLoading    = "loading graph"
	PhasePlanning   = "planning wave"
	PhaseDispatch   = "dispatching"
	PhaseMonitoring = "monitoring"
	PhaseCollecting = "collecting results"
	PhaseMerging    = "merging"
	PhaseReviewing  = "reviewing"
	PhaseRepairing  = "repairing"
	PhaseContinuing = "continuing"
	PhaseFollower   = "following"
)

// Scheduler runs the loop over one data dir. Create it with New, then Start it (or call
// RunOnce from tests). It is safe for concurrent use.
//
// It is the composition of one service per duty, each with its own state and lock, that a
// test can drive alone: leadership (leader.go: the leader lease and its keeper), supervision
// (supervisor.go: the managed agents this process runs, their leases and fences), recovery
// (recover.go: re-attach after a restart, the reaper), the workspace keeper (workspaces.go:
// prepare, verify, the scheduled cleanup and retention) and landing (lander.go). The
// Scheduler itself runs the tick (tick.go): planning and dispatch (plan.go, dispatch.go) and
// voyage settlement (settle.go).
type Scheduler struct {
	eng *engine.Engine
	wt  *worktree.Manager
	run *runner.Runner
	cfg Config
	log *slog.Logger

	leader *leadership // the leader lease (leader.go)
	node   *membership // the node lease in cluster mode, else nil (node.go)
	sup    *supervisor // the managed agents of this process (supervisor.go)
	rec    *recovery   // re-attach and reaper (recover.go)
	ws     *workspaces // the workspace keeper (workspaces.go)
	land   *lander     // the landing service (lander.go)

	mu        sync.Mutex // guards the planning step's memory below
	lastWave  string     // signature of the wave this leader last stored
	lastHolds string     // signature of the holds this leader last stored (holdsUnset: none yet)
	rateWake  rateWaker  // wakes the tick when a rate-limit window ends (ratelimit.go)

	phase atomic.Value // string
	wake  chan struct{}
	life  lifecycle      // the tick loop
	bg    sync.WaitGroup // landing workers in flight (landerHost.spawn)

	// stopCtx is cancelled by Stop: landings run under it (see landerHost).
	stopCtx  context.Context
	stopLand context.CancelFunc

	testCrashPoint func(stage string) // crash-injection tests (export_test.go)
}

// holdsUnset is lastHolds before this leader stored any: the first planning step writes.
const holdsUnset = "unset"

// background runs fn in a goroutine that Stop waits for.
func (s *Scheduler) background(fn func()) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		fn()
	}()
}

// New returns a scheduler over an engine, a workspace manager and an agent runner.
func New(eng *engine.Engine, wt *worktree.Manager, run *runner.Runner, cfg Config) (*Scheduler, error) {
	cfg = cfg.withDefaults()
	for _, p := range cfg.Profiles {
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("scheduler: %w", err)
		}
	}
	s := &Scheduler{eng: eng, wt: wt, run: run, cfg: cfg, log: cfg.Logger,
		lastHolds: holdsUnset, wake: make(chan struct{}, 1), life: lifecycle{name: "scheduler"}}
	s.stopCtx, s.stopLand = context.WithCancel(context.Background())
	s.ws = newWorkspaces(eng, wt, run, cfg)
	s.leader = newLeadership(eng, cfg, s.Phase, s.leadershipChanged)
	supervising := s.leader.leading
	if cfg.Node != "" {
		if err := engine.CheckNodeName(cfg.Node); err != nil {
			return nil, fmt.Errorf("scheduler: %w", err)
		}
		s.node = newMembership(eng, cfg, s.Phase, s.membershipChanged)
		supervising = func() bool { return s.node.fence() != nil }
		s.leader.eligible = supervising
	}
	s.ws.leads = s.leader.leading
	s.sup = newSupervisor(eng, run, cfg, supervisorHost{wake: s.Wake, phase: s.setPhase, leading: supervising, verify: s.ws.verify, publish: s.ws.publish})
	s.rec = newRecovery(eng, run, cfg, s.sup, s.ws.prepare)
	s.land = newLander(eng, wt, cfg, landerHost{spawn: s.background, stop: s.stopCtx, wake: s.Wake, phase: s.setPhase})
	s.phase.Store(PhaseIdle)
	return s, nil
}

// leadershipChanged tells the services what a leadership step found (called in order, under
// the leadership's lock): a new epoch runs recovery again and stores the holds afresh; a
// lost lead detaches every supervised agent (the new leader re-attaches them); a follower
// forgets recovery and says so in its phase.
func (s *Scheduler) leadershipChanged(c leadershipChange) {
	if s.node != nil {
		s.clusterLeadershipChanged(c)
		return
	}
	switch c {
	case leadershipElected:
		s.rec.reset()
		s.mu.Lock()
		s.lastHolds = holdsUnset
		s.mu.Unlock()
	case leadershipLost, leadershipNone:
		if c == leadershipLost {
			s.sup.detachAll()
		}
		s.rec.reset()
		s.phase.Store(PhaseFollower)
	}
}

// clusterLeadershipChanged is leadershipChanged in cluster mode: the leader lease brings the
// cluster-wide duties only, so a new epoch stores the holds afresh and a lost lead changes
// nothing of this node's agents (the node lease governs them: membershipChanged).
func (s *Scheduler) clusterLeadershipChanged(c leadershipChange) {
	if c == leadershipElected {
		s.mu.Lock()
		s.lastHolds = holdsUnset
		s.mu.Unlock()
	}
}

// membershipChanged tells the services what a node lease step found (cluster mode): a new
// epoch runs the re-attach pass again (agents still supervised are skipped); a node taken
// over by another process detaches every supervised agent (that process re-attaches them);
// a node run by another live process leaves this one following.
func (s *Scheduler) membershipChanged(c membershipChange) {
	switch c {
	case membershipJoined:
		s.rec.reset()
	case membershipLost, membershipRefused:
		if c == membershipLost {
			s.sup.detachAll()
		}
		s.rec.reset()
		s.phase.Store(PhaseFollower)
	}
}

// Node returns this scheduler's node name in cluster mode ("" on a single node).
func (s *Scheduler) Node() string { return s.cfg.Node }

// Phase returns what the scheduler is doing now.
func (s *Scheduler) Phase() string { return s.phase.Load().(string) }

func (s *Scheduler) setPhase(p string) { s.phase.Store(p) }

// Leader reports whether this process currently runs the loop.
func (s *Scheduler) Leader() bool { return s.leader.leading() }

// SetBudgets puts a reloaded configuration's budget settings in force while the scheduler
// runs: the profiles' daily caps and their day (engine.SetBudgets) and the price table that
// turns reported tokens into dollars. The next tick plans with them, so a raised cap lets
// held missions start without a restart. p must not be changed after the call.
func (s *Scheduler) SetBudgets(b engine.Budgets, p engine.Prices) {
	s.eng.SetBudgets(b)
	s.sup.prices.Store(&p)
	s.Wake()
}

// Wake asks for a tick as soon as possible.
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start runs the loop in the background until Stop: a tick every Config.Tick and at once on
// any committed change that can unblock work; between ticks the leadership service renews
// the leader lease and the supervisor the supervised agents' leases, so a long tick loses
// neither. A second Start (or a Start after Stop) is ErrStarted and starts nothing.
func (s *Scheduler) Start(ctx context.Context) error {
	if err := s.life.start(ctx, s.runLoop); err != nil {
		return err
	}
	if err := s.leader.Start(ctx); err != nil {
		return err
	}
	if s.node != nil {
		if err := s.node.Start(ctx); err != nil {
			return err
		}
	}
	return s.sup.Start(ctx)
}

// runLoop is the tick loop, subscribed to the engine's changes while it runs.
func (s *Scheduler) runLoop(ctx context.Context) {
	sub := s.eng.Hub().Subscribe()
	defer sub.Close()
	s.loop(ctx, sub)
}
func (s *Scheduler) loop(ctx context.Context, sub *engine.Subscription) {
	tick := time.NewTicker(s.tickEvery())
	defer tick.Stop()
	for {
		if _, err := s.RunOnce(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("tick failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.wake:
		case <-sub.Ready():
			if changes, overflow := sub.Take(); !overflow && !unblocking(changes) {
				continue
			}
		}
	}
}

// tickEvery is the timer period: the tick, but often enough to renew the leader lease.
func (s *Scheduler) tickEvery() time.Duration {
	return min(s.cfg.Tick, s.cfg.LeaderLease/5)
}

// unblocking reports whether any change could let work move: anything but the scheduler's
// own bookkeeping.
func unblocking(changes []engine.Change) bool {
	for _, c := range changes {
		switch c.Type {
		case "wave.planned", "attempt.launched", "mission.progress", "mission.checkpointed", engine.ChangeAgentSeen, engine.EventStalled:
		default:
			return true
		}
	}
	return false
}

// Stop ends the loop, gives up leadership and, unless StopAgentsOnShutdown, detaches from
// the managed agents (they keep working; the next leader collects them). In order: the tick
// loop and the lease keepers end; landings and the scheduled cleanup in flight are
// interrupted and waited for; the supervisor waits for its launches and lets its agents go;
// the leader lease is given up. Stop before Start, or twice, is fine.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.life.stop()
	s.leader.life.stop()
	if s.node != nil {
		s.node.life.stop()
	}
	s.sup.life.stop()
	s.stopLand() // landings in flight are interrupted (a check may run for minutes)
	s.bg.Wait()
	s.ws.Stop()
	s.sup.Stop()
	err := s.leader.Stop(ctx)
	if s.node != nil {
		err = errors.Join(err, s.node.Stop(ctx))
	}
	return err
}
