package scheduler

import (
	"context"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Bounds of the last output attached to a timeout (characters of each stream's end).
const (
	timeoutStdoutTail = 3000
	timeoutStderrTail = 1000
)

// stalled records that the agent went silent past its profile's stall threshold (the runner
// pinged it if it speaks ndjson), where get_mission and the events show it, and logs it.
func (sv *supervisor) stalled(ctx context.Context, a *attemptRun, ev runner.Event) error {
	p := a.profile.WithDefaults()
	n := engine.StallNotice{Profile: p.Name, Idle: ev.Idle, Threshold: p.StallThreshold.D(), StopAt: p.StallTimeout.D(),
		Pinged: p.Runtime == agent.RuntimeNDJSON}
	sv.log.Warn("agent stalled", "mission_id", a.fence.MissionID, "notice", n.Sentence())
	return sv.eng.Stalled(ctx, a.fence, n)
}

// withLastOutput attaches the agent's last output to a timeout (the scheduler stopped it for
// silence or for its hard timeout): the end of its stdout, then of its stderr, bounded, after
// whatever the adapter diagnosed. Other failures are returned as they are.
func withLastOutput(f domain.Failure, out runner.Outcome) domain.Failure {
	if f.Kind != domain.FailureTimeout {
		return f
	}
	parts := []string{}
	if d := strings.TrimSpace(f.Diagnostic); d != "" {
		parts = append(parts, d)
	}
	if s := strings.TrimRight(out.OutputTail, "\n"); s != "" {
		parts = append(parts, "last output (stdout):\n"+tail(s, timeoutStdoutTail))
	} else {
		parts = append(parts, "last output (stdout): none")
	}
	if s := strings.TrimRight(out.StderrTail, "\n"); s != "" {
		parts = append(parts, "last output (stderr):\n"+tail(s, timeoutStderrTail))
	}
	f.Diagnostic = strings.Join(parts, "\n")
	return f
}

// stoppedForTime is the failure of an attempt the runner stopped because it ran out of time
// (its hard timeout, or silence past its stall timeout) and that answered the stop with a
// cancelled result, as an ndjson agent does on agent.cancel: kind timeout, never an
// agent-cancelled error. ok is false for every other attempt.
func stoppedForTime(res domain.WorkerResult, exit agent.ExitStatus, p agent.Profile) (domain.Failure, bool) {
	if res.Status != domain.ResultCancelled {
		return domain.Failure{}, false
	}
	p = p.WithDefaults()
	var why string
	switch exit.Reason {
	case runner.ReasonStalled:
		why = "no output for its stall_timeout " + p.StallTimeout.D().String() + " (profile " + p.Name + ")"
	case runner.ReasonHardTimeout:
		why = "it ran past its hard_timeout " + p.HardTimeout.D().String() + " (profile " + p.Name + ")"
	default:
		return domain.Failure{}, false
	}
	s := "the scheduler stopped the agent: " + why
	return domain.Failure{Kind: domain.FailureTimeout, Tool: "scheduler", Summary: s, Diagnostic: res.Summary}, true
}
