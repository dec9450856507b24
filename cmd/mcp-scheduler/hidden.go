package main

import (
	"io"

	"github.com/mcp-scheduler/mcp-scheduler/agent/refagent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
)

// hidden runs the subcommands that are not part of the command line people use: the agent
// shim (`agent-shim`, through which every managed agent is started) and the bundled reference
// agent (`reference-agent`). They run before anything else so that nothing of the CLI (flags,
// configuration, logging) touches their standard streams. ok is false for any other command.
func hidden(args []string, in io.Reader, out, errw io.Writer) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case runner.ShimSubcommand:
		return runner.ShimMain(args[1:]), true
	case refagent.Subcommand:
		return refagent.Main(args[1:], in, out, errw), true
	}
	return 0, false
}
