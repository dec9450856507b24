package adapters

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// validateResult reports the first way r breaks the worker.result schema (docs/protocol.md):
// an unknown status, a failed or blocked result without a failure kind, a failure without a
// kind, an unknown verdict or finding severity, negative usage (cache tokens included): the
// rules of agent.WorkerResult.Check, which the runner applies to End's result. Unknown
// failure kinds are allowed (they count as error).
func validateResult(r *agent.WorkerResult) error {
	switch r.Status {
	case agent.StatusCompleted, agent.StatusCancelled:
	case agent.StatusFailed, agent.StatusBlocked:
		if r.Failure == nil || strings.TrimSpace(r.Failure.Kind) == "" {
			return fmt.Errorf("status %s needs a failure with a kind", r.Status)
		}
	case "":
		return fmt.Errorf("status is missing (want completed, failed, blocked or cancelled)")
	default:
		return fmt.Errorf("status %q is not one of completed, failed, blocked, cancelled", r.Status)
	}
	if r.Failure != nil && r.Failure.Kind == "" {
		return fmt.Errorf("a failure needs a kind")
	}
	switch r.Verdict {
	case "", agent.VerdictApproved, agent.VerdictMinor, agent.VerdictSevere, agent.VerdictInsufficient:
	default:
		return fmt.Errorf("verdict %q is not one of approved, minor, severe, insufficient", r.Verdict)
	}
	for i, f := range r.Findings {
		switch f.Severity {
		case "", agent.VerdictMinor, agent.VerdictSevere:
		default:
			return fmt.Errorf("finding %d: severity %q is not minor or severe", i, f.Severity)
		}
	}
	if u := r.Usage; u != nil {
		if !validateUsage(u) {
			return fmt.Errorf("usage must not be negative (input %d, output %d, cache read %d, cache write %d, cost %v)",
				u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CostUSD)
		}
	}
	return nil
}

// protocolFailure is the failed result that replaces a worker.result the scheduler cannot
// accept. It keeps what the agent said it consumed (usage still counts against budgets) and
// its own summary, and carries the offending line as the diagnostic.
func protocolFailure(reason string, line []byte, said *agent.WorkerResult) agent.WorkerResult {
	summary := "agent reported an invalid worker.result: " + reason
	full := summary
	var usage *agent.Usage
	if said != nil {
		if s, _ := oneLine(said.Summary, progressRunes); s != "" {
			full += "; its summary: " + s
		}
		if said.Usage != nil && validateUsage(said.Usage) {
			u := *said.Usage
			usage = &u
		}
	}
	return agent.WorkerResult{
		Status:  agent.StatusFailed,
		Summary: full,
		Usage:   usage,
		Failure: &agent.Failure{
			Kind:       agent.KindProtocol,
			Tool:       agent.TypeResult,
			Diagnostic: capBytes(string(line), diagnosticBytes),
			Summary:    summary,
		},
	}
}

func validateUsage(u *agent.Usage) bool {
	return u.InputTokens >= 0 && u.OutputTokens >= 0 && u.CacheReadTokens >= 0 && u.CacheWriteTokens >= 0 &&
		u.CostUSD >= 0 && !math.IsNaN(u.CostUSD)
}
