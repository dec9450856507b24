package engine

import (
	"context"
	"fmt"
	"time"
)

// LandingLock is one node's hold on a target (cluster mode): while it is live, only that node
// merges and runs checks onto the target, so that two nodes never land onto one target at
// once (and one of them redo it after git's compare-and-set push refused it). The landing
// worker takes it before it lands, renews it while it lands and releases it after; a node
// that dies stops renewing, and its lock is taken over at expiry. A single node takes none.
type LandingLock struct {
	Target    string    `json:"target"` // LandingTarget(repository, branch)
	Node      string    `json:"node"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Live reports whether the lock holds at now.
func (l LandingLock) Live(now time.Time) bool { return l.Node != "" && l.ExpiresAt.After(now) }

// LandingTarget names one target in the landing locks: the repository and its target branch
// ("" for the repository's default branch), joined by ':' (a branch name holds no ':', so the
// last one separates them).
func LandingTarget(repository, branch string) string { return repository + ":" + branch }

// LandingLockTake takes the landing lock of target for node until ttl from now (the
// engine's clock), or renews it when node holds it; it reports whether node holds it after
// (false: another node's lock is live). A single statement decides: two nodes racing for
// one target cannot both win.
func (e *Engine) LandingLockTake(ctx context.Context, target, node string, ttl time.Duration) (bool, error) {
	if err := CheckNodeName(node); err != nil {
		return false, err
	}
	if ttl <= 0 {
		return false, fmt.Errorf("landing lock of %s: ttl %s is not positive", target, ttl)
	}
	var held bool
	err := e.update(ctx, node, func(o *op) error {
		var err error
		held, err = o.tx.LandingLockTry(o.ctx, LandingLock{Target: target, Node: node, ExpiresAt: o.now.Add(ttl)}, o.now)
		return err
	})
	return held, err
}

// LandingLockRelease gives up node's landing lock of target (none held: nothing happens).
func (e *Engine) LandingLockRelease(ctx context.Context, target, node string) error {
	return e.update(ctx, node, func(o *op) error { return o.tx.LandingLockRelease(o.ctx, target, node) })
}

// LandingLocks returns the landing locks live now, by target.
func (e *Engine) LandingLocks(ctx context.Context) ([]LandingLock, error) {
	now := e.Now()
	return viewValue(ctx, e, func(r Reader) ([]LandingLock, error) { return r.LandingLocks(ctx, now) })
}
