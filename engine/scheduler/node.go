package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// membership is the node service of cluster mode (Config.Node set): whether this process runs
// its node, through the node lease in the database (engine.NodeLease). A node's agents, leases
// and workspaces are this node's: only the process holding the node lease dispatches for it
// (the acquire is fenced by the lease) and re-attaches its agents after a restart. RunOnce
// takes or renews the lease, at most every LeaderLease/5; its own keeper (Start) renews it
// between ticks, so a long tick does not let it run out.
type membership struct {
	eng     *engine.Engine
	cfg     Config
	log     *slog.Logger
	phase   func() string
	changed func(membershipChange)
	life    lifecycle

	mu      sync.Mutex
	epoch   int64 // 0 while another process runs the node
	renewed time.Time
}

// membershipChange says what a node lease step found.
type membershipChange int

const (
	membershipNone    membershipChange = iota + 1 // nothing changed
	membershipJoined                              // this process runs the node under a new epoch
	membershipLost                                // another process took the node over
	membershipRefused                             // another live process runs the node; this one waits
)

func newMembership(eng *engine.Engine, cfg Config, phase func() string, changed func(membershipChange)) *membership {
	return &membership{eng: eng, cfg: cfg, log: cfg.Logger, phase: phase, changed: changed, life: lifecycle{name: "node"}}
}

// Start runs the node lease keeper until Stop (or ctx ends): a renewal every LeaderLease/5,
// between ticks. A second Start is ErrStarted.
func (n *membership) Start(ctx context.Context) error {
	return n.life.start(ctx, func(ctx context.Context) {
		every(ctx, n.cfg.LeaderLease/5, func() {
			if _, err := n.RunOnce(ctx); err != nil && ctx.Err() == nil {
				n.log.Warn("node lease not renewed", "node", n.cfg.Node, "err", err)
			}
		})
	})
}

// RunOnce takes or renews the node lease and reports whether this process runs the node.
func (n *membership) RunOnce(ctx context.Context) (bool, error) {
	now := n.cfg.Now()
	n.mu.Lock()
	fresh := n.epoch != 0 && now.Sub(n.renewed) < n.cfg.LeaderLease/5
	n.mu.Unlock()
	if fresh {
		return true, nil
	}
	got, err := n.eng.NodeLease(ctx, engine.NodeTake{Name: n.cfg.Node, Owner: n.cfg.Owner, TTL: n.cfg.LeaderLease, Phase: n.phase()})
	if err != nil {
		return false, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.renewed = now
	switch {
	case got.Owner != n.cfg.Owner && n.epoch != 0:
		n.log.Warn("node taken over by another process: its agents are that process's now", "node", n.cfg.Node,
			"owner", got.Owner, "epoch", got.Epoch)
		n.epoch = 0
		n.changed(membershipLost)
	case got.Owner != n.cfg.Owner:
		n.log.Warn("node is run by another live process; waiting for its lease to end", "node", n.cfg.Node,
			"owner", got.Owner, "until", got.ExpiresAt)
		n.changed(membershipRefused)
	case got.Epoch != n.epoch:
		n.log.Info("running scheduler node", "node", n.cfg.Node, "owner", n.cfg.Owner, "epoch", got.Epoch)
		n.epoch = got.Epoch
		n.changed(membershipJoined)
	default:
		n.changed(membershipNone)
	}
	return n.epoch != 0, nil
}

// fence is the node lease this process holds (nil while it does not run the node).
func (n *membership) fence() *engine.NodeFence {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.epoch == 0 {
		return nil
	}
	return &engine.NodeFence{Name: n.cfg.Node, Owner: n.cfg.Owner, Epoch: n.epoch}
}

// Stop ends the node lease when this process holds it, so that a restart takes the node at
// once. A cancelled ctx is not an error (the lease then expires on its own).
func (n *membership) Stop(ctx context.Context) error {
	n.life.stop()
	n.mu.Lock()
	epoch := n.epoch
	n.epoch = 0
	n.mu.Unlock()
	if epoch == 0 {
		return nil
	}
	err := n.eng.NodeResign(ctx, n.cfg.Node, n.cfg.Owner, epoch)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
