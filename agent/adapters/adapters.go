// Package adapters translates each managed-agent runtime into the scheduler's NDJSON protocol
// (package agent): how a profile's agent is launched (argv, environment, files) and how its
// stdout becomes agent.Message values and a final agent.WorkerResult.
//
// Runtimes (design brief §7, shared/reference/agent-clis.md for the real CLIs):
//
//   - ndjson: our protocol as is; agent.start goes to the agent's stdin.
//   - claude-code: `claude -p <pointer> --output-format stream-json --verbose …`, stdin closed.
//   - codex: `codex exec --json … <pointer>` with a per-profile CODEX_HOME whose config.toml this
//     package writes, stdin closed.
//   - command: any program; exit status 0 means completed, every output line is a task.log.
//
// No adapter ever uses a shell: argv elements come from the profile (configuration) with the
// placeholders of agent.Profile.Command substituted element by element.
package adapters

import (
	"errors"
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// ErrUnknownRuntime is returned by For for a runtime no adapter implements.
var ErrUnknownRuntime = errors.New("unknown agent runtime")

// ErrBadProfile wraps every Invocation error caused by the profile or the request (an unknown
// placeholder, a missing brief file, an invalid sandbox mode): retrying the launch cannot help.
var ErrBadProfile = errors.New("cannot launch profile")

// For returns the adapter of runtime, or an error wrapping ErrUnknownRuntime.
func For(runtime agent.Runtime) (agent.Adapter, error) {
	switch runtime {
	case agent.RuntimeNDJSON:
		return NDJSON{}, nil
	case agent.RuntimeClaudeCode:
		return NewClaudeCode(), nil
	case agent.RuntimeCodex:
		return Codex{}, nil
	case agent.RuntimeCommand:
		return Command{}, nil
	}
	return nil, fmt.Errorf("adapter for %q: %w (want ndjson, claude-code, codex or command)", runtime, ErrUnknownRuntime)
}

// badProfile formats an Invocation error that wraps ErrBadProfile.
func badProfile(p agent.Profile, format string, args ...any) error {
	return fmt.Errorf("profile %s: %s: %w", p.Name, fmt.Sprintf(format, args...), ErrBadProfile)
}
