// Command mcp-scheduler is an MCP server that schedules work for AI coding agents, and the
// command line to drive it: `serve` speaks MCP over stdio (default) or HTTP; `go`, `status`,
// `missions`, `events`, `pause`, `resume` and `doctor` work on the same database as a
// running server.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

func main() {
	if code, ok := hidden(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); ok {
		os.Exit(code)
	}
	// The first SIGINT or SIGTERM cancels ctx: commands shut down gracefully (Claude Code
	// sends SIGINT, then SIGTERM 100 ms later, when it exits).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr}, os.Getenv)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the process exit code: 0 success, 1 failure,
// 2 a usage mistake.
func run(ctx context.Context, args []string, s streams, env getenv) int {
	a := &app{streams: s, env: env}
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(s.in)
	root.SetOut(s.out)
	root.SetErr(s.err)
	cmd, err := root.ExecuteContextC(ctx)
	err = cliError(cmd, err) // in the command line's words (cliwords.go)
	a.close()
	if err == nil {
		return 0
	}
	fmt.Fprintf(s.err, "mcp-scheduler: %s\n", domain.Shown(err.Error())) // it may quote what was given
	if isUsage(err) {
		return 2
	}
	return 1
}
