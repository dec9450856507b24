package domain

import "slices"

import "fmt"

// VoyageTransition is one legal move of a voyage: From → To by one of Ops. Changes that keep
// the state (usage added, requirements flagged, cost limit changed) are not transitions.
type VoyageTransition = Edge[VoyageState, string]

// voyageTransitions is the voyage's lifecycle (design brief §1, §4; docs/state-machine.md
// draws it). A voyage is open when dispatched, active from its first acquired mission,
// blocked when none of its unfinished missions can go on without a decision, completed when
// every mission is settled, cancelled by cancel_voyage. Settling re-decides blocked voyages:
// progress reopens them, and one whose missions all settled completes.
var voyageTransitions = []VoyageTransition{
	{VoyageOpen, VoyageActive, []string{"activate"}},
	{VoyageOpen, VoyageBlocked, []string{"settle"}},
	{VoyageOpen, VoyageCompleted, []string{"settle"}},
	{VoyageOpen, VoyageCancelled, []string{"cancel"}},
	{VoyageActive, VoyageBlocked, []string{"settle"}},
	{VoyageActive, VoyageCompleted, []string{"settle"}},
	{VoyageActive, VoyageCancelled, []string{"cancel"}},
	{VoyageBlocked, VoyageActive, []string{"reopen"}},
	{VoyageBlocked, VoyageCompleted, []string{"settle"}},
	{VoyageBlocked, VoyageCancelled, []string{"cancel"}},
}

// VoyageTransitions returns a copy of the voyage's table of legal moves.
func VoyageTransitions() []VoyageTransition {
	return slices.Clone(voyageTransitions)
}

// AllVoyageStates lists the voyage states in lifecycle order.
func AllVoyageStates() []VoyageState {
	return []VoyageState{VoyageOpen, VoyageActive, VoyageBlocked, VoyageCompleted, VoyageCancelled}
}

// CanVoyageTransition reports whether op may move a voyage from one state to another.
func CanVoyageTransition(from, to VoyageState, op string) bool {
	return allows(voyageTransitions, from, to, op)
}

// Terminal reports whether s ends the voyage's life: completed or cancelled voyages no longer
// change (their missions' retries do not reopen them; dispatch a new voyage).
func (s VoyageState) Terminal() bool { return s == VoyageCompleted || s == VoyageCancelled }

// VoyageTransitionError is a voyage move the table does not allow: a bug in the caller, never
// a caller's input, so it is returned rather than corrected.
type VoyageTransitionError struct {
	VoyageID string
	From, To VoyageState
	Op       string
}

func (e *VoyageTransitionError) Error() string {
	return fmt.Sprintf("voyage %s is %s: %s cannot move it to %s (see docs/state-machine.md)", e.VoyageID, e.From, e.Op, e.To)
}

// Unwrap makes errors.Is(err, ErrIllegalTransition) true.
func (e *VoyageTransitionError) Unwrap() error { return ErrIllegalTransition }
