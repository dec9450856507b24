package adapters

import (
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// Command is the adapter of runtime command: any program. Its argv is the profile's command
// followed by extra_args (placeholders substituted per element), stdin is /dev/null, every
// output line is a task.log, and the exit status decides the result: 0 is completed, anything
// else failed with kind error.
type Command struct{}

// Invocation builds the argv, environment and working directory of one attempt.
func (Command) Invocation(p agent.Profile, req agent.LaunchRequest) (agent.Invocation, error) {
	argv, env, err := commandArgv(p, req)
	if err != nil {
		return agent.Invocation{}, err
	}
	return agent.Invocation{Argv: argv, Env: env, Dir: req.Start.Workspace}, nil
}

// NewDecoder returns the per-attempt decoder.
func (Command) NewDecoder() agent.Decoder { return &commandDecoder{} }

type commandDecoder struct {
	last string // the last output line, for the summary
}

// Line reports every line as an info task.log (capped at 4 KiB).
func (d *commandDecoder) Line(line []byte) ([]agent.Message, error) {
	text := capBytes(string(line), logBytes)
	d.last = text
	return []agent.Message{logMsg("info", text)}, nil
}

// End derives the result from the exit status: 0 completed; a scheduler stop cancelled (or
// failed with kind timeout for a timeout); any other status failed with kind error. The last
// output line is quoted in the summary.
func (d *commandDecoder) End(exit agent.ExitStatus) agent.WorkerResult {
	tail := ""
	if s, _ := oneLine(d.last, progressRunes); s != "" {
		tail = "; last output: " + s
	}
	if exit.Reason == "" && exit.Known && exit.Signal == "" && exit.Code == 0 {
		return agent.WorkerResult{Status: agent.StatusCompleted, Summary: "command exited with status 0" + tail}
	}
	if exit.Reason != "" {
		r := endWithoutResult("command", exit, apiTrouble{})
		r.Summary += tail
		return r
	}
	summary := fmt.Sprintf("command failed (%s)%s", describeExit(exit), tail)
	return agent.WorkerResult{Status: agent.StatusFailed, Summary: summary, Failure: &agent.Failure{
		Kind: agent.KindError, Tool: "command", Diagnostic: d.last, Summary: summary,
	}}
}
