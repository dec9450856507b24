package engine

import (
	"context"
	"fmt"
	"slices"
)

// RecordLanding stores the outcome of landing (or trying to land) a completed mission's
// attempt and sets the mission's landing state. Landing records are idempotent per (mission,
// attempt); a landed mission satisfies its hard dependents, which become runnable.
func (e *Engine) RecordLanding(ctx context.Context, l Landing, state LandingState) (Mission, error) {
	var m Mission
	if err := checkID("mission_id", PrefixMission, l.MissionID); err != nil {
		return m, err
	}
	err := e.update(ctx, "scheduler", func(o *op) error {
		var err error
		if m, err = o.get(l.MissionID); err != nil {
			return err
		}
		if m.State != StateCompleted {
			return &TransitionError{MissionID: m.ID, Op: "land", State: m.State}
		}
		if l.Attempt != m.Attempt {
			return invalid("attempt", fmt.Sprintf("attempt %d is not the mission's completed attempt %d", l.Attempt, m.Attempt), "")
		}
		l.At = o.now
		if err := o.tx.LandingUpsert(o.ctx, &l); err != nil {
			return err
		}
		g := Guard{State: m.State, Epoch: m.Lease.Epoch}
		m.Landing, m.UpdatedAt = state, o.now
		if err := o.save(&m, g); err != nil {
			return err
		}
		if err := o.emit("landing."+l.Status, &m, "", map[string]any{"landing": state, "commit": l.Commit,
			"target_branch": l.TargetBranch, "conflicts": l.ConflictPaths, "outside_write_area": l.OutsideWriteArea,
			"detail": truncate(l.Detail, 1000), "duration_ms": l.DurationMS}); err != nil {
			return err
		}
		return o.closeLandingEscalations(m.ID, state)
	})
	return m, err
}

// landingEscalationKinds are the escalations that only say a mission cannot land yet.
var landingEscalationKinds = []string{"checkout", "approval"}

// closeLandingEscalations closes the open escalations that said mission id could not land yet
// once the landing moved to state and nobody must still act on them: all of them when it
// landed (its target's checkout had local changes, or the landing waited for approval), and
// the checkout's when the landing no longer waits for that checkout (it went to repair, for
// example, and the repair carried the work).
func (o *op) closeLandingEscalations(id string, state LandingState) error {
	kinds, why := landingEscalationKinds, "the mission landed"
	switch {
	case state.Satisfies():
	case state != LandingWaiting:
		kinds, why = []string{"checkout"}, "the landing no longer waits for the checkout: it is "+string(state)
	default:
		return nil
	}
	escs, err := o.tx.EscalationList(o.ctx, EscalationFilter{State: EscalationOpen, MissionID: id, Limit: 100})
	if err != nil {
		return err
	}
	for i := range escs {
		e := &escs[i]
		if slices.Contains(kinds, e.Kind) && len(e.MissionIDs) == 1 && e.MissionIDs[0] == id {
			if err := o.closeEscalation(e, ResolveAcknowledge, why); err != nil {
				return err
			}
		}
	}
	return nil
}

// ApproveLanding lets a mission that waits for approval (landing policy approval) land.
func (e *Engine) ApproveLanding(ctx context.Context, id, note, actor string) (Mission, error) {
	var m Mission
	if err := checkID("mission_id", PrefixMission, id); err != nil {
		return m, err
	}
	err := e.update(ctx, actor, func(o *op) error {
		var err error
		if m, err = o.get(id); err != nil {
			return err
		}
		if m.State != StateCompleted || (m.Landing != LandingApproval && m.Landing != LandingWaiting) {
			return invalid("mission_id", fmt.Sprintf("mission %s is %s with landing %s, not waiting for approval", id, m.State, m.Landing),
				"approve completed missions whose landing is approval or waiting (get_mission shows it)")
		}
		g := Guard{State: m.State, Epoch: m.Lease.Epoch}
		m.Landing, m.UpdatedAt = LandingApproved, o.now
		if err := o.save(&m, g); err != nil {
			return err
		}
		return o.emit("landing.approved", &m, "", map[string]any{"landing": m.Landing, "note": truncate(note, 500)})
	})
	return m, err
}

// SetLanding changes a completed mission's landing state without a landing record (for
// example pending → approval under an approval policy, or a repair that carried the work).
func (e *Engine) SetLanding(ctx context.Context, id string, state LandingState, reason string) (Mission, error) {
	var m Mission
	err := e.update(ctx, "scheduler", func(o *op) error {
		var err error
		if m, err = o.get(id); err != nil {
			return err
		}
		if m.State != StateCompleted {
			return &TransitionError{MissionID: m.ID, Op: "land", State: m.State}
		}
		if m.Landing == state {
			return nil
		}
		g := Guard{State: m.State, Epoch: m.Lease.Epoch}
		m.Landing, m.UpdatedAt = state, o.now
		if err := o.save(&m, g); err != nil {
			return err
		}
		if err := o.emit("landing.state", &m, "", map[string]any{"landing": state, "reason": truncate(reason, 1000)}); err != nil {
			return err
		}
		return o.closeLandingEscalations(m.ID, state)
	})
	return m, err
}
