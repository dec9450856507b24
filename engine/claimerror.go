package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// claimFailed turns what went wrong after a claim's acquire into what the caller is told,
// settling the attempt so that nothing stays half-claimed.
func (e *Engine) claimFailed(ctx context.Context, m domain.Mission, err error) error {
	var lost *domain.LeaseLostError
	switch {
	case errors.As(err, &lost):
		return &ClaimLostError{MissionID: m.ID, State: lost.State, Epoch: m.Lease.Epoch, Current: lost.Current}
	case ctx.Err() != nil:
		why := "the claim's request ended before its result was ready (the caller went away or timed out)"
		if aerr := e.abandonClaim(ctx, m.Fence(), why); aerr != nil && !errors.Is(aerr, domain.ErrLeaseLost) {
			return errors.Join(ctx.Err(), aerr)
		}
		return ctx.Err()
	}
	failed, ferr := e.Fail(context.WithoutCancel(ctx), m.Fence(), FailRequest{
		Failure: domain.Failure{Kind: domain.FailureWorkspace, Tool: "git", Diagnostic: err.Error(), Summary: "workspace could not be created"}})
	if errors.As(ferr, &lost) { // lost between the failure and its record: nothing to settle
		return &ClaimLostError{MissionID: m.ID, State: lost.State, Epoch: m.Lease.Epoch, Current: lost.Current}
	}
	ce := &ClaimError{MissionID: m.ID, Attempt: m.Attempt, Err: err}
	if failed.Decision != nil {
		ce.Decision = *failed.Decision
	}
	return errors.Join(ce, ferr)
}

// ClaimError is a claim whose mission was acquired but whose workspace could not be made:
// the attempt was recorded as failed (Decision says what comes next) and nothing was handed
// over. It is a server fault, not the caller's mistake.
type ClaimError struct {
	MissionID string
	Attempt   int
	Decision  domain.Decision
	Err       error
}

func (e *ClaimError) Error() string {
	next := ""
	if e.Decision.Kind != "" {
		next = fmt.Sprintf("; the attempt was recorded as failed (decision %s: %s)", e.Decision.Kind, e.Decision.Reason)
	}
	return fmt.Sprintf("the workspace of mission %s (attempt %d) could not be prepared: %v%s; nothing was handed to you, call claim_mission again for other work",
		e.MissionID, e.Attempt, e.Err, next)
}

// Unwrap returns the preparation's error.
func (e *ClaimError) Unwrap() error { return e.Err }

// ClaimLostError is a claim whose mission was taken away while its workspace was prepared,
// before anything was handed to the caller: cancelled, blocked, or leased again after the
// engine could not renew its lease in time. It cost the mission nothing. It wraps ErrNoWork:
// the caller has nothing to stop and simply claims again.
type ClaimLostError struct {
	MissionID string
	State     domain.MissionState // the mission's state when the claim noticed
	Epoch     int64               // the epoch this claim acquired
	Current   int64               // the mission's epoch when the claim noticed
}

func (e *ClaimLostError) Error() string {
	what := "was " + string(e.State)
	switch {
	case e.Current != e.Epoch && e.State.Leased():
		what = "went to another agent (the lease lapsed before the server could renew it)"
	case e.State == domain.StatePending || e.State == domain.StateInterrupted:
		what = "was given back (the lease lapsed before the server could renew it)"
	}
	return fmt.Sprintf("mission %s %s while its workspace was being prepared, before it was handed to you; nothing was charged to it or to you: call claim_mission again",
		e.MissionID, what)
}

// Unwrap makes errors.Is(err, ErrNoWork) true.
func (e *ClaimLostError) Unwrap() error { return domain.ErrNoWork }

// RateLimitedError is a pull-mode claim's refusal of an agent whose limit group's usage
// window is paused: Reason is the hold managed profiles get (RateLimitedReason, "profile P
// rate-limited until T (…)"). Nothing was acquired, so no retry budget is spent.
type RateLimitedError struct{ Reason Reason }

func (e *RateLimitedError) Error() string {
	return e.Reason.Message + "; nothing is claimed for you until then: call claim_mission again after it"
}
