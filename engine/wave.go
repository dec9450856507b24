package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"strings"
	"time"
)

// RecordWave stores what one planning step decided (dispatched missions with their scores,
// held-back missions with their reasons) with a wave.planned event.
func (e *Engine) RecordWave(ctx context.Context, w domain.Wave) (domain.Wave, error) {
	err := e.update(ctx, "scheduler", func(o *op) error {
		w.At = o.now
		if err := o.tx.WaveInsert(o.ctx, &w); err != nil {
			return err
		}
		return o.emit("wave.planned", nil, "", map[string]any{"wave": w.ID, "runnable": w.Runnable,
			"dispatched": len(w.Dispatched), "held": len(w.Held)})
	})
	return w, err
}

// LatestWave returns the last recorded wave (ErrNotFound before the first).
func (e *Engine) LatestWave(ctx context.Context) (domain.Wave, error) {
	var w domain.Wave
	err := e.view(ctx, func(r Reader) error {
		var err error
		w, err = r.WaveLatest(ctx)
		return err
	})
	if errors.Is(err, domain.ErrNotFound) {
		return w, &domain.NotFoundError{Kind: "wave", ID: "latest"}
	}
	return w, err
}

// RunnableOrder returns up to limit pending and interrupted missions in pick order.
func (e *Engine) RunnableOrder(ctx context.Context, limit int) ([]domain.Mission, error) {
	return viewValue(ctx, e, func(r Reader) ([]domain.Mission, error) { return r.MissionsRunnableOrder(ctx, limit) })
}

// LandingQueue returns up to limit completed missions whose landing can go on, oldest first
// (see Reader.MissionsLandingQueue).
func (e *Engine) LandingQueue(ctx context.Context, limit int) ([]domain.Mission, error) {
	return viewValue(ctx, e, func(r Reader) ([]domain.Mission, error) { return r.MissionsLandingQueue(ctx, limit) })
}

// LeaseFences returns the fence of every leased or running mission (see
// Reader.LeaseFences).
func (e *Engine) LeaseFences(ctx context.Context) ([]domain.Fence, error) {
	return viewValue(ctx, e, func(r Reader) ([]domain.Fence, error) { return r.LeaseFences(ctx) })
}

// Leased returns every leased or running mission.
func (e *Engine) Leased(ctx context.Context) ([]domain.Mission, error) {
	return viewValue(ctx, e, func(r Reader) ([]domain.Mission, error) { return r.MissionsLeased(ctx) })
}

// Outcomes returns the attempt history per (profile, persona), for confidence priors.
func (e *Engine) Outcomes(ctx context.Context) ([]OutcomeCount, error) {
	return viewValue(ctx, e, func(r Reader) ([]OutcomeCount, error) { return r.AttemptOutcomes(ctx) })
}

// Voyages lists voyages in the given states, newest first.
func (e *Engine) Voyages(ctx context.Context, states []domain.VoyageState, limit int) ([]domain.Voyage, error) {
	return viewValue(ctx, e, func(r Reader) ([]domain.Voyage, error) { return r.VoyageList(ctx, states, limit) })
}

// Leadership takes or renews the leader lease for owner (see Tx.LeaderTry) and returns the
// leader row after the attempt. A new epoch (a process took the lease, not a renewal) is
// recorded as a leader.elected event naming the new and the previous holder, so the event
// log says who led the loop at every moment; it is also published as ChangeLeader.
//
// When the store offers a HostLock, the leader holds it while it leads. A process that gets
// it while the row names an unexpired leader of the same host that held it has proved that
// leader dead and takes the lease at once (the event says previous_gone: "host lock
// released"); a process that does not lead gives the lock back at once.
func (e *Engine) Leadership(ctx context.Context, owner string, ttl time.Duration, phase string) (Leader, error) {
	locked, lockErr := e.tryHostLock()
	var before, l Leader
	var gone string
	err := e.update(ctx, owner, func(o *op) error {
		var err error
		if before, err = o.tx.LeaderGet(o.ctx); err != nil {
			return err
		}
		gone = ""
		if locked && provedGone(before, owner, o.now) {
			gone = before.Owner
		}
		take := LeaderTake{Owner: owner, Now: o.now, TTL: ttl, Phase: phase, HostLocked: locked, Gone: gone}
		if l, err = o.tx.LeaderTry(o.ctx, take); err != nil {
			return err
		}
		if l.Epoch == before.Epoch {
			return nil
		}
		data := map[string]any{"owner": l.Owner, "epoch": l.Epoch,
			"expires_at": l.ExpiresAt, "previous_owner": before.Owner, "previous_epoch": before.Epoch,
			"previous_expires_at": before.ExpiresAt}
		if gone != "" && l.Owner == owner {
			data["previous_gone"] = "host lock released: the previous leader on this host died before its lease expired"
		}
		return o.emit("leader.elected", nil, "", data)
	})
	if locked && (err != nil || l.Owner != owner) {
		lockErr = errors.Join(lockErr, e.releaseHostLock())
	}
	if err == nil && (before.Owner != l.Owner || before.Epoch != l.Epoch) {
		e.hub.Publish(Change{Type: ChangeLeader})
	}
	if err == nil && lockErr != nil {
		// The lease works without the lock (a successor then waits for expiry); say so once
		// per call rather than lose leadership over it.
		e.log.Warn("host leader lock unavailable: a successor will wait for the leader lease to expire", "err", lockErr)
	}
	return l, err
}

// provedGone reports whether the leader row names another, unexpired owner on owner's host
// that held the host lock: the caller, holding that lock now, knows it died.
func provedGone(l Leader, owner string, now time.Time) bool {
	return l.Owner != "" && l.Owner != owner && l.HostLocked && !l.ExpiresAt.Before(now) &&
		ownerHost(l.Owner) != "" && ownerHost(l.Owner) == ownerHost(owner)
}

// ownerHost is the host of a leader owner "host:pid:random" ("" in any other form).
func ownerHost(owner string) string {
	parts := strings.Split(owner, ":")
	if len(parts) < 3 {
		return ""
	}
	return strings.Join(parts[:len(parts)-2], ":")
}

func (e *Engine) tryHostLock() (bool, error) {
	if hl, ok := e.store.(HostLock); ok {
		return hl.TryLeaderLock()
	}
	return false, nil
}

func (e *Engine) releaseHostLock() error {
	if hl, ok := e.store.(HostLock); ok {
		return hl.ReleaseLeaderLock()
	}
	return nil
}

// Escalation returns one escalation by id.
func (e *Engine) Escalation(ctx context.Context, id string) (domain.Escalation, error) {
	var out domain.Escalation
	if err := domain.CheckID("escalation_id", domain.PrefixEscalation, id); err != nil {
		return out, err
	}
	err := e.view(ctx, func(r Reader) error {
		var err error
		out, err = r.EscalationGet(ctx, id)
		if errors.Is(err, domain.ErrNotFound) {
			return &domain.NotFoundError{Kind: "escalation", ID: id}
		}
		return err
	})
	return out, err
}

// Resign gives up leadership held by owner at epoch (nothing when it is not theirs any
// more), recorded as a leader.resigned event.
func (e *Engine) Resign(ctx context.Context, owner string, epoch int64) error {
	resigned := false
	err := e.update(ctx, owner, func(o *op) error {
		l, err := o.tx.LeaderGet(o.ctx)
		if err != nil || l.Owner != owner || l.Epoch != epoch {
			return err
		}
		if err := o.tx.LeaderResign(o.ctx, owner, epoch); err != nil {
			return err
		}
		resigned = true
		return o.emit("leader.resigned", nil, "", map[string]any{"owner": owner, "epoch": epoch})
	})
	if err == nil && resigned {
		e.hub.Publish(Change{Type: ChangeLeader})
	}
	if err == nil {
		err = e.releaseHostLock()
	}
	return err
}

// LeaderFence names the leader lease a scheduler process believes it holds; an acquire that
// presents one succeeds only while that lease is current (same owner and epoch, not expired),
// checked in the acquire's own transaction.
type LeaderFence struct {
	Owner string
	Epoch int64
}

// checkLeader returns ErrNotLeader unless f is the current, unexpired leader lease.
func (o *op) checkLeader(f *LeaderFence) error {
	if f == nil {
		return nil
	}
	l, err := o.tx.LeaderGet(o.ctx)
	if err != nil {
		return err
	}
	if l.Owner != f.Owner || l.Epoch != f.Epoch || l.ExpiresAt.Before(o.now) {
		return fmt.Errorf("%w: %s holds epoch %d until %s, not %s at epoch %d", domain.ErrNotLeader,
			orDefault(l.Owner, "nobody"), l.Epoch, l.ExpiresAt.Format(time.RFC3339Nano), f.Owner, f.Epoch)
	}
	return nil
}
