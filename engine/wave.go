package engine

import (
	"context"
	"errors"
	"time"
)

// RecordWave stores what one planning step decided (dispatched missions with their scores,
// held-back missions with their reasons) with a wave.planned event.
func (e *Engine) RecordWave(ctx context.Context, w Wave) (Wave, error) {
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
func (e *Engine) LatestWave(ctx context.Context) (Wave, error) {
	var w Wave
	err := e.view(ctx, func(r Reader) error {
		var err error
		w, err = r.WaveLatest(ctx)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return w, &NotFoundError{Kind: "wave", ID: "latest"}
	}
	return w, err
}

// RunnableOrder returns up to limit pending and interrupted missions in pick order.
func (e *Engine) RunnableOrder(ctx context.Context, limit int) ([]Mission, error) {
	var out []Mission
	err := e.view(ctx, func(r Reader) error {
		var err error
		out, err = r.MissionsRunnableOrder(ctx, limit)
		return err
	})
	return out, err
}

// Leased returns every leased or running mission.
func (e *Engine) Leased(ctx context.Context) ([]Mission, error) {
	var out []Mission
	err := e.view(ctx, func(r Reader) error {
		var err error
		out, err = r.MissionsLeased(ctx)
		return err
	})
	return out, err
}

// Outcomes returns the attempt history per (profile, persona), for confidence priors.
func (e *Engine) Outcomes(ctx context.Context) ([]OutcomeCount, error) {
	var out []OutcomeCount
	err := e.view(ctx, func(r Reader) error {
		var err error
		out, err = r.AttemptOutcomes(ctx)
		return err
	})
	return out, err
}

// Voyages lists voyages in the given states, newest first.
func (e *Engine) Voyages(ctx context.Context, states []VoyageState, limit int) ([]Voyage, error) {
	var out []Voyage
	err := e.view(ctx, func(r Reader) error {
		var err error
		out, err = r.VoyageList(ctx, states, limit)
		return err
	})
	return out, err
}

// Leadership takes or renews the leader lease for owner (see Tx.LeaderTry) and returns the
// leader row after the attempt.
// A change of leader (not a renewal) is published as ChangeLeader.
func (e *Engine) Leadership(ctx context.Context, owner string, ttl time.Duration, phase string) (Leader, error) {
	var before, l Leader
	err := e.store.Update(ctx, func(tx Tx) error {
		var err error
		if before, err = tx.LeaderGet(ctx); err != nil {
			return err
		}
		l, err = tx.LeaderTry(ctx, owner, e.Now(), ttl, phase)
		return err
	})
	if err == nil && (before.Owner != l.Owner || before.Epoch != l.Epoch) {
		e.hub.Publish(Change{Type: ChangeLeader})
	}
	return l, err
}

// Escalation returns one escalation by id.
func (e *Engine) Escalation(ctx context.Context, id string) (Escalation, error) {
	var out Escalation
	if err := checkID("escalation_id", PrefixEscalation, id); err != nil {
		return out, err
	}
	err := e.view(ctx, func(r Reader) error {
		var err error
		out, err = r.EscalationGet(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return &NotFoundError{Kind: "escalation", ID: id}
		}
		return err
	})
	return out, err
}

// Resign gives up leadership held by owner at epoch.
func (e *Engine) Resign(ctx context.Context, owner string, epoch int64) error {
	return e.store.Update(ctx, func(tx Tx) error { return tx.LeaderResign(ctx, owner, epoch) })
}
