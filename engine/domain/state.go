package domain

import "slices"

import "fmt"

// MissionState is where a mission stands in its life (design brief §2). The legal moves
// between states are listed once, in transitions; docs/state-machine.md draws the same table
// and a test keeps the two in step.
type MissionState string

// The eight mission states.
const (
	// StatePending: waiting to be acquired (new, retried, resolved or requeued).
	StatePending MissionState = "pending"
	// StateLeased: acquired by an agent (a lease with a new epoch); not yet started.
	StateLeased MissionState = "leased"
	// StateRunning: the agent started; heartbeats keep the lease alive.
	StateRunning MissionState = "running"
	// StateInterrupted: the attempt ended early with a checkpoint (yield, preemption, or a lost
	// lease with a checkpoint); the next acquire resumes from it, ahead of fresh work.
	StateInterrupted MissionState = "interrupted"
	// StateCompleted: the agent reported success. Terminal; landing is tracked separately.
	StateCompleted MissionState = "completed"
	// StateFailed: failed with its retry budget spent. Terminal until retried by a tool.
	StateFailed MissionState = "failed"
	// StateBlocked: waits for a decision (an open escalation). Not terminal.
	StateBlocked MissionState = "blocked"
	// StateCancelled: cancelled (or skipped). Terminal until retried by a tool.
	StateCancelled MissionState = "cancelled"
)

// AllStates lists every state in a fixed order (for counters, docs and tests).
func AllStates() []MissionState {
	return []MissionState{StatePending, StateLeased, StateRunning, StateInterrupted,
		StateCompleted, StateFailed, StateBlocked, StateCancelled}
}

// Transition is one legal move and the operations that make it.
type Transition = Edge[MissionState, string] // Ops: the engine operations that take this edge (for docs and errors)

// transitions is the one table of legal moves (design brief §2). Anything else is
// ErrIllegalTransition.
var transitions = []Transition{
	{StatePending, StateLeased, []string{"acquire"}},
	{StatePending, StateBlocked, []string{"block", "upstream_failed"}},
	{StatePending, StateCancelled, []string{"cancel"}},
	{StateLeased, StateRunning, []string{"start"}},
	{StateLeased, StatePending, []string{"release", "expire", "fail"}},
	{StateLeased, StateInterrupted, []string{"expire", "release"}},
	{StateLeased, StateFailed, []string{"fail", "expire"}},
	{StateLeased, StateBlocked, []string{"block", "fail", "expire"}},
	{StateLeased, StateCancelled, []string{"cancel"}},
	{StateRunning, StateCompleted, []string{"complete"}},
	{StateRunning, StatePending, []string{"fail", "expire", "release"}},
	{StateRunning, StateFailed, []string{"fail", "expire"}},
	{StateRunning, StateInterrupted, []string{"yield", "expire", "release"}},
	{StateRunning, StateBlocked, []string{"block", "fail", "expire"}},
	{StateRunning, StateCancelled, []string{"cancel"}},
	{StateInterrupted, StateLeased, []string{"acquire"}},
	{StateInterrupted, StateBlocked, []string{"block", "upstream_failed"}},
	{StateInterrupted, StateCancelled, []string{"cancel"}},
	{StateBlocked, StatePending, []string{"resolve", "retry"}},
	{StateBlocked, StateCancelled, []string{"cancel"}},
	{StateFailed, StatePending, []string{"retry"}},
	{StateCancelled, StatePending, []string{"retry"}},
}

// Transitions returns a copy of the table of legal moves.
func Transitions() []Transition {
	return slices.Clone(transitions)
}

// CanTransition reports whether op may move a mission from one state to another.
func CanTransition(from, to MissionState, op string) bool { return allows(transitions, from, to, op) }

// Valid reports whether s is one of the eight states.
func (s MissionState) Valid() bool {
	for _, v := range AllStates() {
		if s == v {
			return true
		}
	}
	return false
}

// Terminal reports whether s ends the mission's life (completed, failed, cancelled). A
// retry tool call can still reopen failed and cancelled missions. It panics on an unknown
// state: a value outside the table is a programming error.
func (s MissionState) Terminal() bool {
	switch s {
	case StateCompleted, StateFailed, StateCancelled:
		return true
	case StatePending, StateLeased, StateRunning, StateInterrupted, StateBlocked:
		return false
	}
	panic(fmt.Sprintf("engine: unknown mission state %q", string(s)))
}

// Runnable reports whether a mission in state s may be acquired, other conditions
// (dependencies, conflicts, backoff, slots) permitting: pending or interrupted.
func (s MissionState) Runnable() bool {
	switch s {
	case StatePending, StateInterrupted:
		return true
	case StateLeased, StateRunning, StateCompleted, StateFailed, StateBlocked, StateCancelled:
		return false
	}
	panic(fmt.Sprintf("engine: unknown mission state %q", string(s)))
}

// Leased reports whether a mission in state s holds a live lease (leased or running).
func (s MissionState) Leased() bool { return s == StateLeased || s == StateRunning }

// Retryable reports whether a mission in state s may be retried (retry_mission, the
// escalation's retry): a failed, blocked or cancelled one. Engine.Retry refuses the others.
func (s MissionState) Retryable() bool {
	return s == StateFailed || s == StateBlocked || s == StateCancelled
}
