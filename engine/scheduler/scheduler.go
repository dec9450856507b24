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
type Scheduler struct {
	eng *engine.Engine
	wt  *worktree.Manager
	run *runner.Runner
	cfg Config
	log *slog.Logger

	mu          sync.Mutex
	procs       map[string]*attemptRun // mission id → the attempt this process supervises
	launching   map[string]bool        // mission ids whose launch runs in the background
	leaderEpoch int64                  // 0 while not the leader
	recovered   bool
	lastWave    string
	lastHolds   string    // signature of the holds this leader last stored (holdsUnset: none yet)
	lastCleanup time.Time // when the last scheduled cleanup started
	cleaning    bool

	phase    atomic.Value // string
	wake     chan struct{}
	cancel   context.CancelFunc
	done     chan struct{}
	kept     chan struct{}  // closed when the keeper (keeper.go) returned
	wg       sync.WaitGroup // supervisor goroutines
	bg       sync.WaitGroup // launches, landings and cleanups in flight
	stopped  bool           // Stop began: new agents are detached at once
	lastLead time.Time

	land *lander // the landing service (lander.go)

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
		procs: map[string]*attemptRun{}, launching: map[string]bool{}, lastHolds: holdsUnset, wake: make(chan struct{}, 1)}
	s.stopCtx, s.stopLand = context.WithCancel(context.Background())
	s.land = newLander(eng, wt, cfg, landerHost{spawn: s.background, stop: s.stopCtx, wake: s.Wake, phase: s.setPhase})
	s.phase.Store(PhaseIdle)
	return s, nil
}

// Phase returns what the scheduler is doing now.
func (s *Scheduler) Phase() string { return s.phase.Load().(string) }

func (s *Scheduler) setPhase(p string) { s.phase.Store(p) }

// Leader reports whether this process currently runs the loop.
func (s *Scheduler) Leader() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leaderEpoch != 0
}

// Wake asks for a tick as soon as possible.
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start runs the loop in the background until Stop: a tick every Config.Tick and at once on
// any committed change that can unblock work; between ticks a keeper renews the leader lease
// and the supervised agents' leases, so a long tick loses neither.
func (s *Scheduler) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.done, s.kept = make(chan struct{}), make(chan struct{})
	sub := s.eng.Hub().Subscribe()
	go func() {
		defer close(s.done)
		defer sub.Close()
		s.loop(ctx, sub)
	}()
	go func() {
		defer close(s.kept)
		s.keep(ctx)
	}()
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
		case "wave.planned", "attempt.launched", "mission.progress", "mission.checkpointed", engine.ChangeAgentSeen:
		default:
			return true
		}
	}
	return false
}

// Stop ends the loop, gives up leadership and, unless StopAgentsOnShutdown, detaches from
// the managed agents (they keep working; the next leader collects them).
func (s *Scheduler) Stop(ctx context.Context) error {
	if s.cancel != nil {
		s.cancel()
		<-s.done
		<-s.kept
	}
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.stopLand() // landings in flight are interrupted (a check may run for minutes)
	s.bg.Wait()  // launches finish (their agents are detached below)
	s.mu.Lock()
	procs := make([]*attemptRun, 0, len(s.procs))
	for _, p := range s.procs {
		procs = append(procs, p)
	}
	epoch := s.leaderEpoch
	s.leaderEpoch = 0
	s.mu.Unlock()
	for _, p := range procs {
		if s.cfg.StopAgentsOnShutdown {
			_ = p.proc.Stop(runner.ReasonCancelled)
		} else {
			p.detach()
		}
	}
	s.wg.Wait()
	var err error
	if epoch != 0 {
		err = s.eng.Resign(ctx, s.cfg.Owner, epoch)
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}
