// Command pgrun runs a command beside a throwaway PostgreSQL cluster: it starts one with
// pgtest.StartCluster (Debian's initdb and pg_ctl, 127.0.0.1, a free port), runs the command
// with MCP_SCHEDULER_TEST_DATABASE_URL set to the cluster's URL, stops the cluster, and exits
// with the command's status. .ci/test's engine-pg stage runs the engine's tests on
// PostgreSQL with it:
//
//	go run ./storage/postgres/pgtest/pgrun -- go test ./engine/...
//
// With MCP_SCHEDULER_TEST_DATABASE_URL already set it starts nothing and runs the command.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: pgrun -- COMMAND [ARG...]")
		return 2
	}
	if os.Getenv(pgtest.EnvURL) != "" {
		return command(args, nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	c, err := pgtest.StartCluster(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgrun:", err)
		return 1
	}
	code := command(args, []string{pgtest.EnvURL + "=" + c.URL("postgres")})
	stop, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Stop(stop); err != nil {
		fmt.Fprintln(os.Stderr, "pgrun: stop the cluster:", err)
		return max(code, 1)
	}
	return code
}

// command runs args with env added to this process's environment and returns its status.
func command(args, env []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "pgrun:", err)
		return 1
	}
}
