package scheduler

import (
	"context"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// DefaultLandingLockTTL is Config.LandingLockTTL's default: how long a node's landing lock on
// a target runs unless renewed (cluster mode); the worker holding it renews it every third of
// that while it lands, so a lock outlives its node by at most this long.
const DefaultLandingLockTTL = time.Minute

// releaseWait bounds the release of a landing lock after a worker's pass (it runs after a
// shutdown too, when the worker's own context is done).
const releaseWait = 5 * time.Second

// otherLocks are the live landing locks other nodes hold, by target (planner.TargetKey), for
// the landing part of a plan: read only in cluster mode and only when a landing is queued, so a
// single node reads nothing more than before.
func (lr *lander) otherLocks(ctx context.Context, v engine.LandingView) (map[string]engine.LandingLock, error) {
	if lr.cfg.Node == "" || len(v.Queue) == 0 {
		return nil, nil
	}
	ls, err := lr.eng.LandingLocks(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]engine.LandingLock{}
	for _, l := range ls {
		if l.Node != lr.cfg.Node {
			out[l.Target] = l
		}
	}
	return out, nil
}

// lockTarget takes this node's landing lock of target before its worker lands (cluster mode;
// on a single node it does nothing and holds). While held, a goroutine renews it every third
// of Config.LandingLockTTL; release stops that and deletes the lock. When another node took the lock
// since the planning snapshot it says so at info and reports false: the worker returns, and
// the next plan shows the wait (planner.Landings, domain.LandWaitTargetBusy).
func (lr *lander) lockTarget(ctx context.Context, target string) (release func(), ok bool) {
	if lr.cfg.Node == "" {
		return func() {}, true
	}
	held, err := lr.eng.LandingLockTake(ctx, target, lr.cfg.Node, lr.cfg.LandingLockTTL)
	if err != nil {
		lr.log.Warn("landing waits: its target's landing lock could not be taken; the next pass tries again", "target", target, "err", err)
		return nil, false
	}
	if !held {
		lr.log.Info("landing waits: another node took its target's landing lock since the plan; the next plan says which", "target", target, "node", lr.cfg.Node)
		return nil, false
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		lr.renewLock(ctx, target, stop)
	}()
	return func() {
		close(stop)
		<-done
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseWait)
		defer cancel()
		if err := lr.eng.LandingLockRelease(rctx, target, lr.cfg.Node); err != nil {
			lr.log.Warn("landing lock not released: other nodes land onto its target when it expires", "target", target, "err", err)
		}
	}, true
}

// renewLock renews this node's landing lock of target every third of Config.LandingLockTTL until
// stop closes or ctx ends. A lock lost meanwhile (this node stalled past its expiry and
// another took it over) is logged: the landing goes on, git's compare-and-set push still
// refuses a move of the target that raced it.
func (lr *lander) renewLock(ctx context.Context, target string, stop <-chan struct{}) {
	t := time.NewTicker(lr.cfg.LandingLockTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		held, err := lr.eng.LandingLockTake(ctx, target, lr.cfg.Node, lr.cfg.LandingLockTTL)
		switch {
		case err != nil:
			lr.log.Warn("landing lock not renewed; retried in a moment", "target", target, "err", err)
		case !held:
			lr.log.Warn("landing lock lost to another node while landing (this node stalled past its expiry); the remote's compare-and-set push guards the target", "target", target)
		}
	}
}
