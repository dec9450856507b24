package agent

import (
	"errors"
	"fmt"
)

// ErrInvalidResult is matched (errors.Is) by every error Check returns.
var ErrInvalidResult = errors.New("invalid worker.result")

// Check reports the first way r breaks the worker.result schema of docs/protocol.md: a status
// that is not completed, failed, blocked or cancelled; a failed result without a failure
// kind; an unknown verdict; a finding without a message or with an unknown severity. Other
// members are free-form. A runner turns a result that fails Check into a failed attempt with
// kind KindProtocol (see ProtocolFailure), never into a crash.
func (r WorkerResult) Check() error {
	switch r.Status {
	case StatusCompleted, StatusFailed, StatusBlocked, StatusCancelled:
	case "":
		return fmt.Errorf("%w: status is missing", ErrInvalidResult)
	default:
		return fmt.Errorf("%w: status %q is not one of completed, failed, blocked, cancelled", ErrInvalidResult, r.Status)
	}
	if r.Status == StatusFailed && (r.Failure == nil || r.Failure.Kind == "") {
		return fmt.Errorf("%w: status failed needs failure.kind", ErrInvalidResult)
	}
	if r.Failure != nil && r.Failure.Kind == "" {
		return fmt.Errorf("%w: failure.kind is missing", ErrInvalidResult)
	}
	switch r.Verdict {
	case "", VerdictApproved, VerdictMinor, VerdictSevere, VerdictInsufficient:
	default:
		return fmt.Errorf("%w: verdict %q is not one of approved, minor, severe, insufficient", ErrInvalidResult, r.Verdict)
	}
	for i, f := range r.Findings {
		if f.Message == "" {
			return fmt.Errorf("%w: findings[%d].message is missing", ErrInvalidResult, i)
		}
		if f.Severity != "" && f.Severity != VerdictMinor && f.Severity != VerdictSevere {
			return fmt.Errorf("%w: findings[%d].severity %q is not minor or severe", ErrInvalidResult, i, f.Severity)
		}
	}
	return nil
}

// ProtocolFailure is the failed result that replaces one the agent got wrong: kind
// KindProtocol, the problem as diagnostic, and the agent's own summary kept when it had one.
func ProtocolFailure(r WorkerResult, problem error) WorkerResult {
	return WorkerResult{
		Status:    StatusFailed,
		Summary:   r.Summary,
		Artifacts: r.Artifacts,
		Evidence:  r.Evidence,
		Usage:     r.Usage,
		Failure: &Failure{
			Kind:       KindProtocol,
			Tool:       "worker.result",
			Diagnostic: problem.Error(),
			Summary:    "the agent's final result broke the protocol: " + problem.Error(),
		},
	}
}
