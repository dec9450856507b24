package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// waitingRetry is how often a landing that waits for a clean checkout is tried again.
const waitingRetry = 10 * time.Second

// landQueueLimit is how many missions of the landing queue one pass reads (oldest first);
// the next pass reads the rest.
const landQueueLimit = 400

// lander is the landing service: the one owner of the landing lifecycle of completed
// missions (engine/domain/landingstate.go, docs/state-machine.md). It takes each mission of the
// landing queue through review when required (review.go), the repository's landing policy,
// the landing itself with the repository's checks, and what a failed landing needs — a repair
// mission or an escalation (land.go). Every landing move is a typed engine operation; every
// escalation it raises is raised once (engine.EscalateOnce). runOnce is one pass over the
// queue; the scheduler's tick calls it, and tests call it on its own.
type lander struct {
	eng  *engine.Engine
	wt   *worktree.Manager
	cfg  Config
	log  *slog.Logger
	host landerHost

	mu      sync.Mutex
	busy    map[string]bool      // repository and target branch keys whose worker runs
	retryAt map[string]time.Time // next retry of landings waiting for a clean checkout
	workers sync.WaitGroup       // workers in flight (wait)
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
		busy: map[string]bool{}, retryAt: map[string]time.Time{}}
}

// runOnce hands the completed missions whose landing can go on (engine.LandingQueue) to one
// landing worker per repository and target branch, in the background so that a slow merge or
// check never holds up the tick. Within one branch missions land one at a time (the
// workspace manager serialises per branch across processes too). A branch whose worker still
// runs is skipped: the next pass picks up what it did not take.
func (lr *lander) runOnce(ctx context.Context) error {
	queue, err := lr.eng.LandingQueue(ctx, landQueueLimit)
	if err != nil {
		return err
	}
	groups := map[string][]domain.Mission{}
	var keys []string
	for _, m := range queue {
		k := m.Repository + "\x00" + lr.cfg.targetBranch(&m)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], m)
	}
	for _, k := range keys {
		lr.startWorker(k, groups[k])
	}
	return nil
}

// wait returns when every worker started so far has returned.
func (lr *lander) wait() { lr.workers.Wait() }

// startWorker starts the landing worker of one branch unless it already runs.
func (lr *lander) startWorker(key string, ms []domain.Mission) {
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
		defer func() {
			lr.mu.Lock()
			delete(lr.busy, key)
			lr.mu.Unlock()
			lr.host.wake()
		}()
		lr.landBranch(lr.host.stop, ms)
	})
}

// landBranch is one worker's pass over the missions of one branch: the gates first, then the
// ready ones land together, worktree.MaxLandBatch at a time.
func (lr *lander) landBranch(ctx context.Context, ms []domain.Mission) {
	var ready []readyLanding
	for i := range ms {
		// The list was read before this worker started, maybe while the previous worker of
		// the branch still landed some of it: read each mission again, so that a landing
		// already done (or sent to repair) is not run a second time.
		m, ok, err := lr.stillLandable(ctx, ms[i].ID)
		if err == nil && ok {
			var r readyLanding
			if r, ok, err = lr.landOne(ctx, &m); ok {
				ready = append(ready, r)
			}
		}
		if lr.failed(ms[i].ID, err) {
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

// dueRetry throttles retries of landings that wait for a clean checkout (this process's
// clock: a new leader retries at once).
func (lr *lander) dueRetry(id string) bool {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	now := lr.cfg.Now()
	if now.Before(lr.retryAt[id]) {
		return false
	}
	lr.retryAt[id] = now.Add(waitingRetry)
	return true
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
