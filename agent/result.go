package agent

import (
	"errors"
	"fmt"
)

// ErrInvalidResult is matched (errors.Is) by every error Check returns.
var ErrInvalidResult = errors.New("invalid worker.result")

// Check reports the first way r breaks the worker.result schema of docs/protocol.md: a status
// that is not completed, failed, blocked or cancelled; a failed or blocked result without a
// failure kind; an unknown verdict or finding severity; negative usage. Other members are
// free-form. (The ndjson adapter applies the same rules to the lines it decodes.) A runner turns a result that fails Check into a failed attempt with
// kind KindProtocol (see ProtocolFailure), never into a crash.
func (r WorkerResult) Check() error {
	switch r.Status {
	case StatusCompleted, StatusFailed, StatusBlocked, StatusCancelled:
	case "":
		return fmt.Errorf("%w: status is missing", ErrInvalidResult)
	default:
		return fmt.Errorf("%w: status %q is not one of completed, failed, blocked, cancelled", ErrInvalidResult, r.Status)
	}
	if (r.Status == StatusFailed || r.Status == StatusBlocked) && (r.Failure == nil || r.Failure.Kind == "") {
		return fmt.Errorf("%w: status %s needs failure.kind", ErrInvalidResult, r.Status)
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
		if f.Severity != "" && f.Severity != VerdictMinor && f.Severity != VerdictSevere {
			return fmt.Errorf("%w: findings[%d].severity %q is not minor or severe", ErrInvalidResult, i, f.Severity)
		}
	}
	if u := r.Usage; u != nil && (u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 || !(u.CostUSD >= 0)) {
		return fmt.Errorf("%w: usage must not be negative", ErrInvalidResult)
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
		Usage:     validUsage(r.Usage),
		Failure: &Failure{
			Kind:       KindProtocol,
			Tool:       "worker.result",
			Diagnostic: problem.Error(),
			Summary:    "the agent's final result broke the protocol: " + problem.Error(),
		},
	}
}

// validUsage keeps usage that can be counted against budgets (nothing negative).
func validUsage(u *Usage) *Usage {
	if u == nil || u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 || !(u.CostUSD >= 0) {
		return nil
	}
	c := *u
	return &c
}
