package engine

import (
	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// ResultFromWire converts the agent protocol's worker.result (NDJSON, or a pull-mode agent's
// complete_mission / fail_mission arguments) into the engine's WorkerResult. The two shapes
// are kept apart so that a protocol change never changes a stored row; this is the only
// place that knows both.
func ResultFromWire(r agent.WorkerResult) domain.WorkerResult {
	out := domain.WorkerResult{Status: r.Status, Summary: r.Summary, Artifacts: r.Artifacts,
		Evidence: r.Evidence, Verdict: r.Verdict, Decision: r.Decision}
	if r.Failure != nil {
		f := FailureFromWire(*r.Failure)
		out.Failure = &f
	}
	if r.Usage != nil {
		u := UsageFromWire(*r.Usage)
		out.Usage = &u
	}
	for _, f := range r.Findings {
		out.Findings = append(out.Findings, domain.Finding{Severity: f.Severity, Path: f.Path, Line: f.Line, Message: f.Message})
	}
	return out
}

// UsageFromWire converts the agent protocol's usage (worker.result, task.usage) into the
// engine's.
func UsageFromWire(u agent.Usage) domain.Usage {
	return domain.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CostUSD: u.CostUSD,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}
}

// FailureFromWire converts the agent protocol's failure object into the engine's Failure.
func FailureFromWire(f agent.Failure) domain.Failure {
	return domain.Failure{Kind: f.Kind, Tool: f.Tool, Diagnostic: f.Diagnostic, Location: f.Location, Summary: f.Summary}
}
