package dashboard_test

import (
	"os"
	"strings"
	"testing"

	"github.com/mcp-scheduler/mcp-scheduler/agent/refagent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// TestMain lets the test binary play our binary's hidden subcommands (the agent shim and the
// reference agent), so the tests with a scheduler run real agent processes without a
// prebuilt binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case runner.ShimSubcommand:
			os.Exit(runner.ShimMain(os.Args[2:]))
		case refagent.Subcommand:
			os.Exit(refagent.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		}
	}
	for _, kv := range testenv.GitEnv() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	os.Exit(m.Run())
}
