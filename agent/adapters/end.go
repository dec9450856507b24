package adapters

import (
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// Reasons (agent.ExitStatus.Reason) under which the scheduler stopped an agent because it ran
// out of time; every other non-empty reason means the scheduler took the work away
// (cancelled, lease lost, shutdown) and the attempt ends cancelled.
const (
	reasonHardTimeout = "hard_timeout"
	reasonStalled     = "stalled"
)

// describeExit renders an exit status for a summary: "exit status 1", "killed by SIGKILL",
// "exit status unknown".
func describeExit(exit agent.ExitStatus) string {
	switch {
	case !exit.Known:
		return "exit status unknown"
	case exit.Signal != "":
		return "killed by " + exit.Signal
	default:
		return fmt.Sprintf("exit status %d", exit.Code)
	}
}

// apiTrouble remembers model-API failures seen in a stream that may end without a final
// event (the CLI was killed while retrying): the last authentication failure and the last
// other API error, each as a one-line diagnostic.
type apiTrouble struct {
	auth  string
	model string
}

// endWithoutResult is the final result of a stream that never reported one: cancelled when
// the scheduler took the work away, otherwise failed whatever the exit code (Claude Code
// exits 0 on SIGINT without a result). The kind says what is known: auth when the API
// rejected the credentials, timeout when the scheduler stopped a run that overran, model when
// the API was failing, else crash. The summary always carries the exit status.
func endWithoutResult(who string, exit agent.ExitStatus, seen apiTrouble) agent.WorkerResult {
	how := describeExit(exit)
	stoppedForTime := exit.Reason == reasonHardTimeout || exit.Reason == reasonStalled
	if exit.Reason != "" && !stoppedForTime {
		return agent.WorkerResult{
			Status:  agent.StatusCancelled,
			Summary: fmt.Sprintf("%s was stopped by the scheduler (%s) before it reported a result; %s", who, exit.Reason, how),
		}
	}
	fail := func(kind, summary, diag string) agent.WorkerResult {
		return agent.WorkerResult{Status: agent.StatusFailed, Summary: summary, Failure: &agent.Failure{
			Kind: kind, Tool: who, Diagnostic: diag, Summary: summary,
		}}
	}
	switch {
	case seen.auth != "":
		return fail(agent.KindAuth, fmt.Sprintf("%s ended without a result after the model API rejected its credentials (%s)", who, how), seen.auth)
	case stoppedForTime:
		return fail(agent.KindTimeout, fmt.Sprintf("%s was stopped by the scheduler (%s) before it reported a result; %s", who, exit.Reason, how), seen.model)
	case seen.model != "":
		return fail(agent.KindModel, fmt.Sprintf("%s ended without a result while the model API was failing (%s)", who, how), seen.model)
	}
	return fail(agent.KindCrash, fmt.Sprintf("%s ended without reporting a result (%s)", who, how), "")
}
