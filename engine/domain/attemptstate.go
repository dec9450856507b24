package domain

import "slices"

// AttemptOutcome is how an attempt ended. An attempt lives as long as its mission's lease
// (one epoch): it begins when the mission is acquired and ends with exactly one of these,
// written once to its attempt record by the mission transition that ends the lease
// (attemptEndings; docs/state-machine.md "Attempts").
type AttemptOutcome string

// Attempt outcomes.
const (
	OutcomeCompleted AttemptOutcome = "completed" // the agent reported success
	OutcomeFailed    AttemptOutcome = "failed"    // the agent (or the supervisor, for a crash or lost lease) reported failure; the retry policy decided what next
	OutcomeBlocked   AttemptOutcome = "blocked"   // the agent asked for a decision
	OutcomeCancelled AttemptOutcome = "cancelled" // cancel_mission or cancel_voyage stopped it
	OutcomeYielded   AttemptOutcome = "yielded"   // the agent stopped early with its checkpoint (preemption, children)
	OutcomeReleased  AttemptOutcome = "released"  // the lease was given back unused (shutdown, a claim not handed over)
	// OutcomeAbandoned: the agent was never heard from — its lease ran out with no heartbeat,
	// progress, checkpoint or result, or the claim's caller went away before the claim's
	// result was ready. It costs no retry budget.
	OutcomeAbandoned AttemptOutcome = "abandoned"
)

// AttemptEnding is one row of the attempt's table: the mission operation that ends an
// attempt and the outcome it records.
type AttemptEnding struct {
	Op      string
	Outcome AttemptOutcome
}

// attemptEndings: which mission operation (engine/domain/state.go's ops) ends an attempt with which
// outcome. An expired lease ends it as failed (a crash) when the agent was heard from, else as
// abandoned.
var attemptEndings = []AttemptEnding{
	{"complete", OutcomeCompleted},
	{"fail", OutcomeFailed},
	{"expire", OutcomeFailed},
	{"expire", OutcomeAbandoned},
	{"block", OutcomeBlocked},
	{"cancel", OutcomeCancelled},
	{"yield", OutcomeYielded},
	{"release", OutcomeReleased},
}

// AttemptEndings returns a copy of the attempt's table.
func AttemptEndings() []AttemptEnding {
	return slices.Clone(attemptEndings)
}

// AllAttemptOutcomes lists every outcome.
func AllAttemptOutcomes() []AttemptOutcome {
	return []AttemptOutcome{OutcomeCompleted, OutcomeFailed, OutcomeBlocked, OutcomeCancelled,
		OutcomeYielded, OutcomeReleased, OutcomeAbandoned}
}
