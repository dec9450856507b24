package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// leadership is the leadership service: whether this process leads the loop of its data dir,
// through the leader lease with its epoch in the database (engine.Leadership). RunOnce takes
// or renews the lease; the loop Start runs renews it every LeaderLease/5 between ticks, so a
// long tick never lets another process take over a live leader. Every change is handed to
// changed, under the service's lock, so that the other services hear of changes in order.
type leadership struct {
	eng     *engine.Engine
	cfg     Config
	log     *slog.Logger
	phase   func() string // what the scheduler does (stored with the lease, for status)
	changed func(leadershipChange)
	life    lifecycle
	// eligible, when set (cluster mode), says whether this process may lead now: only while
	// it runs its node. The keeper renews nothing otherwise, so the lease runs out and a
	// node that runs takes it.
	eligible func() bool

	mu       sync.Mutex
	epoch    int64 // 0 while not the leader
	lastLead time.Time
}

// leadershipChange says what a leadership step found.
type leadershipChange int

const (
	leadershipLost    leadershipChange = iota + 1 // this process led and does not any more
	leadershipElected                             // this process leads under a new epoch
	leadershipNone                                // follower before and after: nothing changed
)

func newLeadership(eng *engine.Engine, cfg Config, phase func() string, changed func(leadershipChange)) *leadership {
	return &leadership{eng: eng, cfg: cfg, log: cfg.Logger, phase: phase, changed: changed, life: lifecycle{name: "leadership"}}
}

// Start runs the lease keeper until Stop (or ctx ends); a second Start is ErrStarted.
func (l *leadership) Start(ctx context.Context) error { return l.life.start(ctx, l.keep) }

// keep renews the leader lease every LeaderLease/5 until ctx ends; a failure is logged and
// the next turn tries again.
func (l *leadership) keep(ctx context.Context) {
	every(ctx, l.cfg.LeaderLease/5, func() {
		if l.eligible != nil && !l.eligible() {
			return
		}
		if _, err := l.RunOnce(ctx); err != nil && ctx.Err() == nil {
			l.log.Warn("leader lease not renewed", "err", err)
		}
	})
}

// RunOnce takes or renews the leader lease and reports whether this process leads. A lease
// renewed less than a fifth of its TTL ago is not written again (no write on every wake-up).
func (l *leadership) RunOnce(ctx context.Context) (bool, error) {
	now := l.cfg.Now()
	l.mu.Lock()
	fresh := l.epoch != 0 && now.Sub(l.lastLead) < l.cfg.LeaderLease/5
	l.mu.Unlock()
	if fresh {
		return true, nil
	}
	ld, err := l.eng.Leadership(ctx, l.cfg.Owner, l.cfg.LeaderLease, l.phase())
	if err != nil {
		return false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lastLead = now
	if ld.Owner != l.cfg.Owner {
		if l.epoch != 0 {
			l.log.Warn("leadership lost", "leader", ld.Owner, "epoch", ld.Epoch)
			l.changed(leadershipLost)
		} else {
			l.changed(leadershipNone)
		}
		l.epoch = 0
		return false, nil
	}
	if l.epoch != ld.Epoch {
		l.log.Info("leading the scheduler loop", "owner", l.cfg.Owner, "epoch", ld.Epoch)
		l.epoch = ld.Epoch
		l.changed(leadershipElected)
	}
	return true, nil
}

// leading reports whether this process led at its last leadership step (no database read).
func (l *leadership) leading() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch != 0
}

// fence is the leader lease this process holds (nil while it does not lead), presented with
// every acquire so that a process that lost leadership in the middle of a tick cannot
// dispatch.
func (l *leadership) fence() *engine.LeaderFence {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epoch == 0 {
		return nil
	}
	return &engine.LeaderFence{Owner: l.cfg.Owner, Epoch: l.epoch}
}

// Stop ends the lease keeper and gives the lease up when this process holds it, so the next
// process takes over at once rather than when it expires. A cancelled ctx is not an error
// (the lease then expires on its own).
func (l *leadership) Stop(ctx context.Context) error {
	l.life.stop()
	l.mu.Lock()
	epoch := l.epoch
	l.epoch = 0
	l.mu.Unlock()
	if epoch == 0 {
		return nil
	}
	err := l.eng.Resign(ctx, l.cfg.Owner, epoch)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
