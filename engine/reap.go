package engine

import (
	"context"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// ReapExpired requeues leased and running missions whose lease expired (design brief §5
// step 1). keep, when set, is asked first for each: true means the agent is known to be
// alive (same PID and start time), and its lease is renewed instead.
//
// The expired set is read from a snapshot and each mission is then updated in its own
// guarded transaction that re-checks state, epoch and expiry, so a completion or heartbeat
// that commits in between wins and the sweep changes nothing for it (shared/cases B11). A lost
// attempt whose agent was heard from counts as a crash failure against the retry budget; one
// whose agent never was is abandoned (see abandon: no budget, its own limit). With a
// checkpoint the mission becomes interrupted and resumes from it. It returns the ids requeued
// (or failed or blocked).
func (e *Engine) ReapExpired(ctx context.Context, keep func(domain.Mission) bool) ([]string, error) {
	now := e.Now()
	var expired []domain.Mission
	err := e.view(ctx, func(r Reader) error {
		var err error
		expired, err = r.MissionsExpired(ctx, now, 1000)
		return err
	})
	if err != nil {
		return nil, err
	}
	if e.testHookReap != nil {
		e.testHookReap()
	}
	var reaped []string
	for _, snap := range expired {
		if keep != nil && keep(snap) {
			if _, err := e.RenewLease(ctx, snap.Fence()); err != nil && !domain.CallerError(err) {
				return reaped, err
			}
			continue
		}
		done, err := e.reapOne(ctx, snap)
		if err != nil {
			return reaped, err
		}
		if done {
			reaped = append(reaped, snap.ID)
		}
	}
	return reaped, nil
}

func (e *Engine) reapOne(ctx context.Context, snap domain.Mission) (bool, error) {
	reaped := false
	err := e.update(ctx, "scheduler", func(o *op) error {
		m, err := o.get(snap.ID)
		if err != nil {
			return nil // purged meanwhile
		}
		if m.State != snap.State || m.Lease.Epoch != snap.Lease.Epoch || !m.State.Leased() ||
			!m.Lease.ExpiresAt.Before(o.now) {
			return nil // completed, renewed or re-leased since the snapshot
		}
		reaped = true
		holder := leaseHolder(m)
		if !m.Contacted {
			return o.abandon(&m, fmt.Sprintf("lease of %s expired before anything was heard from it (no heartbeat, progress or checkpoint)", holder))
		}
		f := domain.Failure{Kind: domain.FailureCrash, Tool: "lease",
			Summary: fmt.Sprintf("lease of %s expired: no heartbeat", holder)}
		return o.applyFailure(&m, FailRequest{Failure: f, Summary: f.Summary}, "expire", "lease.expired")
	})
	if reaped {
		e.forgetRenewal(snap.Fence())
	}
	return reaped, err
}

// RenewLease extends a live lease now, whatever RenewInterval says: the server renews it on
// the agent's behalf (the scheduler for agent processes it knows are alive, a claim while it
// prepares the workspace), so it records no contact with the agent. Fenced by the epoch.
func (e *Engine) RenewLease(ctx context.Context, f domain.Fence) (HeartbeatAnswer, error) {
	e.forgetRenewal(f)
	return e.renew(ctx, f, false)
}

// leaseHolder names who held m's lease for a reaped lease's reason: the owner, and in
// cluster mode the node it ran on (a node that died is the usual cause there).
func leaseHolder(m domain.Mission) string {
	owner := orDefault(m.Lease.Owner, "its agent")
	if m.Node == "" {
		return owner
	}
	return fmt.Sprintf("%s on node %s", owner, m.Node)
}
