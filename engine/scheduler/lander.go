package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// waitingRetry is how often a landing that waits for a clean checkout is tried again.
const waitingRetry = 10 * time.Second

// lander is the landing service: the one owner of executing the landing lifecycle of
// completed missions (engine/domain/landingstate.go, docs/state-machine.md). Which landings
// move, per target, and why the others wait is the planner's (planner.Landings, part of the
// tick's plan); the lander applies those moves: it takes each landing through review when
// required (review.go), the repository's landing policy, the landing itself with the
// repository's checks, and what a failed landing needs — a repair mission or an escalation
// (land.go). Every landing move is a typed engine operation; every escalation it raises is
// raised once (engine.EscalateOnce). The tick calls apply with its plan's moves; runOnce is a
// pass on its own (its own view and plan) for tests.
type lander struct {
	eng  *engine.Engine
	wt   *worktree.Manager
	cfg  Config
	log  *slog.Logger
	host landerHost

	mu      sync.Mutex
	busy    map[string]bool      // repository and target branch keys whose worker runs
	retryAt map[string]time.Time // next retry of landings waiting for a clean checkout
	// pushRetryAt is the next try of landings whose push a remote refused (landremote.go)
	pushRetryAt map[string]time.Time
	workers     sync.WaitGroup // workers in flight (wait)
}

// landerHost is what the lander needs from the scheduler that runs it.
type landerHost struct {
	// spawn runs a worker in the background; the scheduler's Stop waits for it.
	spawn func(func())
	// stop is cancelled by the scheduler's Stop: workers land under it, not under a tick's
	// context (a tick ends long before a landing), so that a shutdown interrupts a landing (a
	// long check) rather than waiting for it; the next leader lands the mission again from
	// scratch (landing is idempotent per mission and attempt).
	stop context.Context
	// wake asks for a tick (a worker finished: what it landed may unblock work).
	wake func()
	// phase reports what the scheduler does (status): reviewing, merging, repairing.
	phase func(string)
}

func newLander(eng *engine.Engine, wt *worktree.Manager, cfg Config, host landerHost) *lander {
	return &lander{eng: eng, wt: wt, cfg: cfg, log: cfg.Logger, host: host,
		busy: map[string]bool{}, retryAt: map[string]time.Time{}, pushRetryAt: map[string]time.Time{}}
}

// runOnce is the landing service's pass on its own (tests call it; the scheduler's tick
// applies the landing part of its plan instead): it reads the landing view (one read
// transaction), lets the planner decide which landings move (planner.Landings) and applies
// that. The waits are logged; the tick records them as holds.
func (lr *lander) runOnce(ctx context.Context) error {
	v, err := lr.eng.LandingView(ctx)
	if err != nil {
		return err
	}
	s := lr.snapshot(v)
	if s.Locks, err = lr.otherLocks(ctx, v); err != nil {
		return err
	}
	groups, waits := planner.Landings(s)
	for _, w := range waits {
		lr.log.Debug("landing waits", "mission_id", w.MissionID, "reason_code", w.Reason.Code, "reason", w.Reason.Message)
	}
	lr.apply(groups)
	return nil
}

// snapshot is the landing part of the planner's snapshot: the store's view with the
// repositories' landing policies, the targets whose worker runs in this process, and the
// landings waiting for a clean checkout whose retry this process has not reached yet (its
// own clock: a new leader retries at once).
func (lr *lander) snapshot(v engine.LandingView) planner.LandingSnapshot {
	s := planner.LandingSnapshot{LandingView: v, Node: lr.cfg.Node, Policies: map[string]planner.LandingPolicy{}, Busy: map[string]bool{}, RetryAt: map[string]time.Time{}}
	for _, ms := range [][]domain.Mission{v.Queue, v.Awaiting} {
		for i := range ms {
			s.Policies[ms[i].Repository] = lr.cfg.landingPolicy(ms[i].Repository)
		}
	}
	now := lr.cfg.Now()
	lr.mu.Lock()
	defer lr.mu.Unlock()
	for k := range lr.busy {
		s.Busy[k] = true
	}
	for i := range v.Queue {
		m := &v.Queue[i]
		if at, ok := lr.retryAt[m.ID]; ok && m.Landing == domain.LandingWaiting && now.Before(at) {
			s.RetryAt[m.ID] = at
		}
	}
	return s
}

// apply hands each group of landings that move (the plan's landing moves) to the landing
// worker of its target, in the background so that a slow merge or check never holds up the
// tick. Within one target missions land one at a time (the workspace manager serialises per
// branch across processes too). A target whose worker still runs is skipped (the plan has
// it wait when it was in flight at the snapshot): the next plan moves what it did not take.
// A landing waiting for a clean checkout is retried at most every waitingRetry.
func (lr *lander) apply(groups []planner.LandingGroup) {
	now := lr.cfg.Now()
	for _, g := range groups {
		lr.mu.Lock()
		for _, mv := range g.Moves {
			if mv.Mission.Landing == domain.LandingWaiting {
				lr.retryAt[mv.Mission.ID] = now.Add(waitingRetry)
			}
		}
		lr.mu.Unlock()
		lr.startWorker(g.Key(), g.Moves)
	}
}

// wait returns when every worker started so far has returned.
func (lr *lander) wait() { lr.workers.Wait() }

// startWorker starts the landing worker of one target unless it already runs; in cluster
// mode the worker lands only while it holds the target's landing lock (landlock.go).
func (lr *lander) startWorker(key string, moves []planner.LandingMove) {
	lr.mu.Lock()
	busy := lr.busy[key]
	lr.busy[key] = true
	lr.mu.Unlock()
	if busy {
		return
	}
	lr.workers.Add(1)
	lr.host.spawn(func() {
		defer lr.workers.Done()
		landed := false
		defer func() {
			lr.mu.Lock()
			delete(lr.busy, key)
			lr.mu.Unlock()
			if landed { // a refused lock wakes no one: the holder's release is a commit, which wakes every node
				lr.host.wake()
			}
		}()
		release, ok := lr.lockTarget(lr.host.stop, key)
		if !ok {
			return
		}
		defer release()
		lr.landBranch(lr.host.stop, moves)
		landed = true
	})
}

// landBranch is one worker's pass over the landings of one target that the plan moves: the
// gates first, then the ready ones land together, worktree.MaxLandBatch at a time.
func (lr *lander) landBranch(ctx context.Context, moves []planner.LandingMove) {
	var ready []readyLanding
	for _, mv := range moves {
		// The plan was read before this worker started, maybe while another process's worker
		// of the target still landed some of it: read each mission again, so that a landing
		// already done (or sent to repair) is not run a second time; its gates are decided
		// again on what is read (planner.NextStep).
		if !lr.pushRetryDue(mv.Mission.ID) {
			lr.log.Debug("landing waits: its remote refused the last push (an escalation says why)", "mission_id", mv.Mission.ID)
			continue
		}
		m, ok, err := lr.stillLandable(ctx, mv.Mission.ID)
		if err == nil && ok {
			var r readyLanding
			if r, ok, err = lr.landOne(ctx, &m); ok {
				ready = append(ready, r)
			}
		}
		if lr.failed(mv.Mission.ID, err) {
			return
		}
	}
	for len(ready) > 0 {
		n := min(len(ready), worktree.MaxLandBatch)
		if err := lr.landBatch(ctx, ready[:n]); lr.failed(ready[0].m.ID, err) {
			return
		}
		ready = ready[n:]
	}
}

// failed logs a landing's error and says whether the worker should stop (a shutdown).
func (lr *lander) failed(id string, err error) bool {
	switch {
	case err != nil && lr.host.stop.Err() != nil:
		lr.log.Info("landing interrupted by shutdown; the next leader lands it", "mission_id", id)
		return true
	case err != nil:
		lr.log.Error("landing failed", "mission_id", id, "err", err)
	}
	return false
}

// stillLandable reads a mission again and says whether its landing is still for the landing
// queue (completed; landing pending, approved, review or waiting).
func (lr *lander) stillLandable(ctx context.Context, id string) (domain.Mission, bool, error) {
	d, err := lr.eng.GetMission(ctx, id)
	if err != nil {
		return domain.Mission{}, false, err
	}
	m := d.Mission
	return m, m.State == domain.StateCompleted && m.Landing.Queued(), nil
}

// once raises an escalation about one mission unless one of its kind about that mission is
// still open (engine.EscalateOnce: the key is kept in the database, so neither another leader
// nor this one after a restart raises it again). A failure is logged, not returned: the
// landing it reports on goes on, and the next pass raises it.
func (lr *lander) once(ctx context.Context, spec engine.EscalationSpec) {
	if _, _, err := lr.eng.EscalateOnce(ctx, spec, "scheduler"); err != nil {
		lr.log.Warn("escalation not raised", "kind", spec.Kind, "mission_ids", spec.MissionIDs, "err", err)
	}
}
