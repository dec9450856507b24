//go:build heavy

package engine_test

import (
	"bufio"
	"context"
	"database/sql"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// The heavy suites (many OS processes, SIGKILL) run without -race, behind the build tag
// heavy; .ci/test runs them:
//
//	go test -tags heavy -count=1 -timeout 30m -run 'TestHeavy|TestB13|TestProperty' ./engine/ -rapid.checks=1000

// Environment of helper processes (besides helperEnv, which names the mode).
const (
	envDB     = "ENGINE_TEST_DB"     // database file
	envWorker = "ENGINE_TEST_WORKER" // worker number, for agent names
	envArg    = "ENGINE_TEST_ARG"    // mode-specific argument
)

// child is a helper process running this test binary in a helper mode. Its stdin stays open
// until release (helpers wait for it to start together); its stdout is read line by line.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr *strings.Builder
}

func startChild(t *testing.T, mode string, env ...string) *child {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode}, env...)...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	c := &child{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout), stderr: &strings.Builder{}}
	c.lines.Buffer(make([]byte, 1<<20), 64<<20)
	cmd.Stderr = c.stderr
	if dir := os.Getenv("ENGINE_TEST_STDERR_DIR"); dir != "" { // debugging: keep helpers' stderr
		f, err := os.CreateTemp(dir, mode+"-*.log")
		require.NoError(t, err)
		t.Cleanup(func() { _ = f.Close() })
		cmd.Stderr = io.MultiWriter(c.stderr, f)
	}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return c
}

// line reads the child's next stdout line ("" at EOF).
func (c *child) line() string {
	if c.lines.Scan() {
		return c.lines.Text()
	}
	return ""
}

// exitWithParent ends a helper process when its parent test process goes away (a test
// binary that times out does not run its cleanups, and orphans would keep the CPU busy).
func exitWithParent() {
	parent := os.Getppid()
	go func() {
		for range time.Tick(200 * time.Millisecond) {
			if os.Getppid() != parent {
				os.Exit(3)
			}
		}
	}()
}

// waitForRelease blocks a helper until the parent closes its stdin.
func waitForRelease() { _, _ = io.Copy(io.Discard, os.Stdin) }

// rawDB opens the database file directly, for checks that do not go through the engine.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func queryInt(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(q, args...).Scan(&n), q)
	return n
}

// openHelperEngine opens the store named by envDB for a helper process, with the system clock.
func openHelperEngine(ttl time.Duration) (engine.Store, *engine.Engine, error) {
	st, err := teststore.Open(context.Background(), os.Getenv(envDB))
	if err != nil {
		return nil, nil, err
	}
	return st, engine.New(st, engine.Options{LeaseTTL: ttl, DefaultRepository: "/repo"}), nil
}
