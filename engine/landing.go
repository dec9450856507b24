package engine

import (
	"context"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"slices"
)

// The landing lifecycle (docs/state-machine.md, "Landing state machine"): every move of a
// completed mission's landing goes through one of the typed operations below, each checked
// against the table in landingstate.go (LandingTransitionError otherwise), written with a
// guarded update and recorded as one event carrying the new landing state (so that the
// event log replays it, VerifyReplay).

// RecordLanding stores the outcome of a landing attempt on a completed mission's current
// attempt (LandOpLand) and moves its landing to state: landed or not_required (its hard
// dependents become runnable), waiting (a clean checkout), conflicted (a decision) or repair
// (a repair mission carries it). Landing records are idempotent per (mission, attempt): an
// outcome repeated in the state it led to changes nothing, except waiting, which records each
// retry. The landing must be one the landing queue works on (pending, review, approved,
// waiting); anything else is a LandingTransitionError.
func (e *Engine) RecordLanding(ctx context.Context, l domain.Landing, state domain.LandingState) (domain.Mission, error) {
	var m domain.Mission
	if err := domain.CheckID("mission_id", domain.PrefixMission, l.MissionID); err != nil {
		return m, err
	}
	err := e.update(ctx, "scheduler", func(o *op) error {
		var err error
		if m, err = o.completed(l.MissionID); err != nil {
			return err
		}
		if l.Attempt != m.Attempt {
			return domain.Invalid("attempt", fmt.Sprintf("attempt %d is not the mission's completed attempt %d", l.Attempt, m.Attempt), "")
		}
		if m.Landing == state && state != domain.LandingWaiting {
			return nil // a repeated outcome (another worker landed it first): already recorded
		}
		if err := domain.CheckLanding(m.ID, m.Landing, state, domain.LandOpLand); err != nil {
			return err
		}
		l.At = o.now
		if err := o.tx.LandingUpsert(o.ctx, &l); err != nil {
			return err
		}
		return o.land(&m, state, "landing."+l.Status, map[string]any{"commit": l.Commit,
			"target_branch": l.TargetBranch, "conflicts": l.ConflictPaths, "outside_write_area": l.OutsideWriteArea,
			"detail": domain.Clip(l.Detail, 1000), "duration_ms": l.DurationMS})
	})
	return m, err
}

// AwaitReview records that a review round (mission reviewID) started for a completed mission
// whose review is required (LandOpReview): its landing waits for the verdict. A second round
// keeps the landing in review and changes nothing.
func (e *Engine) AwaitReview(ctx context.Context, id, reviewID string) (domain.Mission, error) {
	return e.moveLanding(ctx, id, domain.LandingReview, domain.LandOpReview, map[string]any{"reason": "waiting for review " + reviewID, "review_id": reviewID})
}

// AwaitApproval makes a completed mission's landing wait for approve_landing
// (LandOpAskApproval): the repository's landing policy is approval, or its review did not
// approve the work; reason says which (at most 1,000 bytes are kept).
func (e *Engine) AwaitApproval(ctx context.Context, id, reason string) (domain.Mission, error) {
	return e.moveLanding(ctx, id, domain.LandingApproval, domain.LandOpAskApproval, map[string]any{"reason": domain.Clip(reason, 1000)})
}

// LeaveLanding leaves a completed mission's branch for a person (LandOpLeave: the
// repository's landing policy is none). It never lands by itself.
func (e *Engine) LeaveLanding(ctx context.Context, id, reason string) (domain.Mission, error) {
	return e.moveLanding(ctx, id, domain.LandingLeft, domain.LandOpLeave, map[string]any{"reason": domain.Clip(reason, 1000)})
}

// RepairLanding records that repair mission repairID carries a completed mission's work
// (LandOpRepair: its reviewer asked for changes); the repair's landing lands it (CarryLanding).
func (e *Engine) RepairLanding(ctx context.Context, id, repairID, reason string) (domain.Mission, error) {
	return e.moveLanding(ctx, id, domain.LandingRepair, domain.LandOpRepair, map[string]any{"reason": domain.Clip(reason, 1000), "repair_id": repairID})
}

// ApproveLanding lets a mission that waits for approval (landing approval, or waiting for a
// clean checkout under an approval policy) land: LandOpApprove. Any other mission gets an
// invalid mission_id error saying which it is.
func (e *Engine) ApproveLanding(ctx context.Context, id, note, actor string) (domain.Mission, error) {
	var m domain.Mission
	if err := domain.CheckID("mission_id", domain.PrefixMission, id); err != nil {
		return m, err
	}
	err := e.update(ctx, actor, func(o *op) error {
		var err error
		if m, err = o.get(id); err != nil {
			return err
		}
		if m.State != domain.StateCompleted || !domain.CanLand(m.Landing, domain.LandingApproved, domain.LandOpApprove) {
			return domain.Invalid("mission_id", fmt.Sprintf("mission %s is %s with landing %s, not waiting for approval", id, m.State, m.Landing),
				"approve completed missions whose landing is approval or waiting (get_mission shows it)")
		}
		// approval leaves the escalations as they are: the landing may still meet the checkout
		return o.setLanding(&m, domain.LandingApproved, "landing.approved", map[string]any{"note": domain.Clip(note, 500)})
	})
	return m, err
}

// CarryLanding marks a completed mission's work landed because repair mission carrierID,
// whose branch started from it, landed (LandOpCarry). carrierID must be a repair mission
// about id whose own landing is landed or not_required (nothing left to land: the work is on
// the target already); a mission already landed (or with nothing to land) is left as it is.
func (e *Engine) CarryLanding(ctx context.Context, id, carrierID string) (domain.Mission, error) {
	var m domain.Mission
	if err := domain.CheckID("carrier_id", domain.PrefixMission, carrierID); err != nil {
		return m, err
	}
	err := e.update(ctx, "scheduler", func(o *op) error {
		c, err := o.get(carrierID)
		if err != nil {
			return err
		}
		if c.Kind != domain.KindRepair || c.SubjectID != id || !c.Landing.Satisfies() {
			return domain.Invalid("carrier_id", fmt.Sprintf("mission %s is a %s mission about %q with landing %s", c.ID, c.Kind, c.SubjectID, c.Landing),
				"name the landed repair mission whose subject is "+id)
		}
		if m, err = o.completed(id); err != nil || m.Landing.Satisfies() {
			return err
		}
		return o.land(&m, domain.LandingLanded, "landing.state", map[string]any{"reason": "carried by repair mission " + c.ID, "carrier_id": c.ID})
	})
	return m, err
}

// moveLanding is the landing operations without a landing record: it reads mission id, checks
// lop may move its landing to `to` and writes it with an event landing.state (data adds the
// reason). Asked in the state it leads to, it changes nothing.
func (e *Engine) moveLanding(ctx context.Context, id string, to domain.LandingState, lop domain.LandingOp, data map[string]any) (domain.Mission, error) {
	var m domain.Mission
	if err := domain.CheckID("mission_id", domain.PrefixMission, id); err != nil {
		return m, err
	}
	err := e.update(ctx, "scheduler", func(o *op) error {
		var err error
		if m, err = o.completed(id); err != nil || m.Landing == to {
			return err
		}
		if err := domain.CheckLanding(m.ID, m.Landing, to, lop); err != nil {
			return err
		}
		return o.land(&m, to, "landing.state", data)
	})
	return m, err
}

// completed reads a mission whose landing is to move: it must be completed.
func (o *op) completed(id string) (domain.Mission, error) {
	m, err := o.get(id)
	if err == nil && m.State != domain.StateCompleted {
		err = &domain.TransitionError{MissionID: m.ID, Op: "land", State: m.State}
	}
	return m, err
}

// land writes m's landing state `to` (setLanding), then closes the escalations the move made
// moot.
func (o *op) land(m *domain.Mission, to domain.LandingState, eventType string, data map[string]any) error {
	if err := o.setLanding(m, to, eventType, data); err != nil {
		return err
	}
	return o.closeLandingEscalations(m.ID, to)
}

// setLanding writes m's landing state `to` (already checked against the table) with a guarded
// update and event eventType; data gets the new "landing".
func (o *op) setLanding(m *domain.Mission, to domain.LandingState, eventType string, data map[string]any) error {
	g := Guard{State: m.State, Epoch: m.Lease.Epoch}
	m.Landing, m.UpdatedAt = to, o.now
	if err := o.save(m, g); err != nil {
		return err
	}
	data["landing"] = to
	return o.emit(eventType, m, "", data)
}

// landingEscalationKinds are the escalations that only say a mission cannot land yet.
var landingEscalationKinds = []string{"checkout", "approval"}

// closeLandingEscalations closes the open escalations that said mission id could not land yet
// once the landing moved to state and nobody must still act on them: all of them when it
// landed (its target's checkout had local changes, or the landing waited for approval), and
// the checkout's when the landing no longer waits for that checkout (it went to repair, for
// example, and the repair carried the work).
func (o *op) closeLandingEscalations(id string, state domain.LandingState) error {
	kinds, why := landingEscalationKinds, "the mission landed"
	switch {
	case state.Satisfies():
	case state != domain.LandingWaiting:
		kinds, why = []string{"checkout"}, "the landing no longer waits for the checkout: it is "+string(state)
	default:
		return nil
	}
	escs, err := o.tx.EscalationList(o.ctx, EscalationFilter{State: domain.EscalationOpen, MissionID: id, Limit: 100})
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
