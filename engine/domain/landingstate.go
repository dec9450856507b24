package domain

import (
	"fmt"
	"slices"
	"strings"
)

// AllLandingStates lists every landing state in a fixed order (for docs and tests): the
// mission's way from completion onto its target branch (LandingState in types.go).
func AllLandingStates() []LandingState {
	return []LandingState{LandingNone, LandingPending, LandingReview, LandingApproval, LandingApproved,
		LandingWaiting, LandingRepair, LandingConflicted, LandingLeft, LandingLanded, LandingNotRequired}
}

// Valid reports whether l is one of the eleven landing states.
func (l LandingState) Valid() bool { return slices.Contains(AllLandingStates(), l) }

// LandingOp is an operation that moves a completed mission's landing; each has one engine
// method (Engine.RecordLanding, AwaitReview, AwaitApproval, ApproveLanding, LeaveLanding,
// RepairLanding, CarryLanding; Complete for LandOpComplete).
type LandingOp string

// The landing operations.
const (
	// LandOpComplete: the mission completed; its landing starts (pending), or there is
	// nothing to land (not_required: a review, a snapshot or main-checkout workspace).
	LandOpComplete LandingOp = "complete"
	// LandOpReview: a review round started (review: required); the landing waits for it.
	LandOpReview LandingOp = "review"
	// LandOpAskApproval: the landing waits for approve_landing (the repository's policy
	// approval, or a review that did not approve the work).
	LandOpAskApproval LandingOp = "ask_approval"
	// LandOpApprove: approve_landing; the landing queue lands it next.
	LandOpApprove LandingOp = "approve"
	// LandOpLeave: the repository's landing policy is none; the branch is left for a person.
	LandOpLeave LandingOp = "leave"
	// LandOpRepair: a repair mission carries the work (its reviewer asked for changes).
	LandOpRepair LandingOp = "repair"
	// LandOpLand: a landing attempt ended, with its landing record: landed, nothing to land,
	// waiting for a clean checkout, conflicted (a decision), or repair (a repair mission
	// carries the conflict or the failed checks).
	LandOpLand LandingOp = "land"
	// LandOpCarry: the repair mission that carried this work landed, so the work is on the
	// target too.
	LandOpCarry LandingOp = "carry"
)

// LandingTransition is one legal move of a landing and the operations that make it.
type LandingTransition = Edge[LandingState, LandingOp]

// Queued reports whether the landing queue works on a completed mission whose landing is l
// (Reader.MissionsLandingQueue): pending, review, approved or waiting, the states a landing
// attempt (LandOpLand) starts from. It reads the table of waits (landingwait.go).
func (l LandingState) Queued() bool {
	w, ok := l.Wait()
	return ok && w.Queued
}

// landingTransitions is the one table of legal landing moves; docs/state-machine.md draws it
// and a test keeps the two in step. Anything else is a LandingTransitionError. An operation
// asked for in the state it leads to changes nothing (a second review round keeps review),
// except LandOpLand, which records every attempt (waiting → waiting on each retry).
var landingTransitions = []LandingTransition{
	{LandingNone, LandingPending, []LandingOp{LandOpComplete}},
	{LandingNone, LandingNotRequired, []LandingOp{LandOpComplete}},
	{LandingPending, LandingReview, []LandingOp{LandOpReview}},
	{LandingPending, LandingApproval, []LandingOp{LandOpAskApproval}},
	{LandingPending, LandingLeft, []LandingOp{LandOpLeave}},
	{LandingPending, LandingRepair, []LandingOp{LandOpRepair, LandOpLand}},
	{LandingPending, LandingLanded, []LandingOp{LandOpLand, LandOpCarry}},
	{LandingPending, LandingNotRequired, []LandingOp{LandOpLand}},
	{LandingPending, LandingWaiting, []LandingOp{LandOpLand}},
	{LandingPending, LandingConflicted, []LandingOp{LandOpLand}},
	{LandingReview, LandingApproval, []LandingOp{LandOpAskApproval}},
	{LandingReview, LandingLeft, []LandingOp{LandOpLeave}},
	{LandingReview, LandingRepair, []LandingOp{LandOpRepair, LandOpLand}},
	{LandingReview, LandingLanded, []LandingOp{LandOpLand, LandOpCarry}},
	{LandingReview, LandingNotRequired, []LandingOp{LandOpLand}},
	{LandingReview, LandingWaiting, []LandingOp{LandOpLand}},
	{LandingReview, LandingConflicted, []LandingOp{LandOpLand}},
	{LandingApproval, LandingApproved, []LandingOp{LandOpApprove}},
	{LandingApproval, LandingLanded, []LandingOp{LandOpCarry}},
	{LandingApproved, LandingLeft, []LandingOp{LandOpLeave}},
	{LandingApproved, LandingRepair, []LandingOp{LandOpLand}},
	{LandingApproved, LandingLanded, []LandingOp{LandOpLand, LandOpCarry}},
	{LandingApproved, LandingNotRequired, []LandingOp{LandOpLand}},
	{LandingApproved, LandingWaiting, []LandingOp{LandOpLand}},
	{LandingApproved, LandingConflicted, []LandingOp{LandOpLand}},
	{LandingWaiting, LandingApproval, []LandingOp{LandOpAskApproval}},
	{LandingWaiting, LandingApproved, []LandingOp{LandOpApprove}},
	{LandingWaiting, LandingLeft, []LandingOp{LandOpLeave}},
	{LandingWaiting, LandingRepair, []LandingOp{LandOpLand}},
	{LandingWaiting, LandingLanded, []LandingOp{LandOpLand, LandOpCarry}},
	{LandingWaiting, LandingNotRequired, []LandingOp{LandOpLand}},
	{LandingWaiting, LandingWaiting, []LandingOp{LandOpLand}},
	{LandingWaiting, LandingConflicted, []LandingOp{LandOpLand}},
	{LandingRepair, LandingLanded, []LandingOp{LandOpCarry}},
	{LandingConflicted, LandingLanded, []LandingOp{LandOpCarry}},
	{LandingLeft, LandingLanded, []LandingOp{LandOpCarry}},
}

// LandingTransitions returns a copy of the table of legal landing moves.
func LandingTransitions() []LandingTransition {
	return slices.Clone(landingTransitions)
}

// CanLand reports whether op may move a landing from one state to another.
func CanLand(from, to LandingState, op LandingOp) bool {
	return allows(landingTransitions, from, to, op)
}

// landingTargets lists the states op can lead to from from (for errors).
func landingTargets(from LandingState, op LandingOp) []string {
	var out []string
	for _, t := range landingTransitions {
		if t.From == from && slices.Contains(t.Ops, op) {
			out = append(out, string(t.To))
		}
	}
	return out
}

// landingSources lists the states op can start from (for errors).
func landingSources(op LandingOp) []string {
	var out []string
	for _, t := range landingTransitions {
		if slices.Contains(t.Ops, op) && !slices.Contains(out, string(t.From)) {
			out = append(out, string(t.From))
		}
	}
	return out
}

// LandingTransitionError is a landing operation the table does not allow from the mission's
// landing state (or to the state asked for). It wraps ErrIllegalTransition.
type LandingTransitionError struct {
	MissionID string
	Op        LandingOp
	From, To  LandingState
}

func (e *LandingTransitionError) Error() string {
	s := fmt.Sprintf("mission %s: landing operation %s cannot move landing %s to %s", e.MissionID, e.Op, e.From, e.To)
	if to := landingTargets(e.From, e.Op); len(to) > 0 {
		return s + fmt.Sprintf(" (from %s it leads to %s; see docs/state-machine.md)", e.From, strings.Join(to, ", "))
	}
	return s + fmt.Sprintf(" (it applies to landings in %s; get_mission shows the landing; see docs/state-machine.md)",
		strings.Join(landingSources(e.Op), ", "))
}

// Unwrap makes errors.Is(err, ErrIllegalTransition) true.
func (e *LandingTransitionError) Unwrap() error { return ErrIllegalTransition }

// checkLanding returns nil when op may move mission id's landing from → to.
func CheckLanding(id string, from, to LandingState, op LandingOp) error {
	if CanLand(from, to, op) {
		return nil
	}
	return &LandingTransitionError{MissionID: id, Op: op, From: from, To: to}
}
