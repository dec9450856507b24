package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// binary is the mcp-scheduler built once per package run (TestMain). Tests run it as MCP
// clients do, and the in-process harnesses use it as the runner's Self (the agent shim and
// the reference agent are its hidden subcommands).
var binary string

// BuiltBinary is the binary TestMain built, for the external test package (e2e_test) of this
// directory.
func BuiltBinary() string { return binary }

// TestMain builds the binary once, gives git a fixed identity, and lets the test binary play
// the stdio relay (relayMain) when an MCP client starts it as a server command.
func TestMain(m *testing.M) {
	if os.Getenv(relayEnvOut) != "" {
		os.Exit(relayMain(os.Args[1:]))
	}
	// Not "mcp-scheduler-e2e-bin-*": the multi-process harness (crash_harness_test.go) removes
	// directories of that pattern whose suffix is not a live pid.
	dir, err := os.MkdirTemp("", "mcp-scheduler-e2e-main-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "mcp-scheduler")
	build := exec.Command("go", "build", "-o", binary, "./cmd/mcp-scheduler")
	build.Dir = testenv.RepoRoot()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build mcp-scheduler:", err)
		os.Exit(1)
	}
	for _, kv := range testenv.GitEnv() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// WorkTimeout bounds a context for work (a voyage, a landing, a restart) in the end-to-end
// tests: the time left until the test's waits end (testenv.WaitDeadline: the test binary's
// own deadline less a margin for the failure report and the cleanup). Work takes as long as
// the machine's load makes it; a fixed bound of a few minutes is a speed assertion, which
// failed at load 30 (docs/testing.md, "What a test may assert about time"). Waits themselves
// go through testenv.WaitFor and its kin.
func WorkTimeout(t testing.TB) time.Duration { return time.Until(testenv.WaitDeadline(t)) }
