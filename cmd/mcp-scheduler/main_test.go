package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// binary is the mcp-scheduler built once for the tests that run it as MCP clients do.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		// Fuzzing (config_fuzz_test.go): the coordinator and each worker run TestMain, and the
		// target needs neither the binary nor a PostgreSQL server.
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "mcp-scheduler-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "mcp-scheduler")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	code := pgtest.Main(m) // m.Run, with a PostgreSQL server for the postgres_test.go cases
	_ = os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// sandbox is an isolated home: its own data dir, config dir and a git repository as the
// working directory, so that tests never touch the user's files.
type sandbox struct {
	t       *testing.T
	home    string
	dataDir string
	repo    string
	env     []string
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { requireNoProcessesLeft(t, home) }) // after every later cleanup
	s := &sandbox{t: t, home: home, dataDir: filepath.Join(home, "state"), repo: filepath.Join(home, "repo")}
	require.NoError(t, os.MkdirAll(s.repo, 0o755))
	s.env = append(testenv.GitEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "xdgstate"), EnvDataDir+"="+s.dataDir, "PATH="+os.Getenv("PATH"), "NO_COLOR=1")
	s.git("init", "-q", "-b", "main")
	s.git("commit", "-q", "--allow-empty", "-m", "start")
	return s
}

func (s *sandbox) git(args ...string) {
	s.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", s.repo}, args...)...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	require.NoError(s.t, err, "git %v: %s", args, out)
}

// getenv reads the sandbox environment (for in-process runs).
func (s *sandbox) getenv(k string) string {
	for _, kv := range s.env {
		if key, v, ok := strings.Cut(kv, "="); ok && key == k {
			return v
		}
	}
	return ""
}

// cli runs one command line in-process in the sandbox and returns stdout, stderr and the
// exit code.
func (s *sandbox) cli(args ...string) (string, string, int) {
	s.t.Helper()
	wd, err := os.Getwd()
	require.NoError(s.t, err)
	s.t.Chdir(wd) // a no-op that panics in a parallel test: the in-process CLI changes the process's directory
	require.NoError(s.t, os.Chdir(s.repo))
	defer func() { require.NoError(s.t, os.Chdir(wd)) }()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, streams{in: strings.NewReader(""), out: &out, err: &errb}, s.getenv)
	return out.String(), errb.String(), code
}

// cliJSON runs a command with --json and decodes its output.
func cliJSON[T any](s *sandbox, args ...string) T {
	s.t.Helper()
	out, errs, code := s.cli(append(args, "--json")...)
	require.Equal(s.t, 0, code, "%v: %s", args, errs)
	var v T
	require.NoError(s.t, json.Unmarshal([]byte(out), &v), out)
	return v
}

// proc is a running mcp-scheduler serve process.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout, line by line
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan error
}

// start runs the binary in the sandbox with extra environment entries.
func (s *sandbox) start(extraEnv []string, args ...string) *proc {
	s.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = s.repo
	cmd.Env = append(append([]string{}, s.env...), extraEnv...)
	p := &proc{t: s.t, cmd: cmd, lines: make(chan string, 1000), done: make(chan error, 1)}
	var err error
	p.stdin, err = cmd.StdinPipe()
	require.NoError(s.t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(s.t, err)
	cmd.Stderr = &lockedWriter{mu: &p.mu, w: &p.stderr}
	require.NoError(s.t, cmd.Start())
	go func() {
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				p.lines <- line
			}
			if err != nil {
				close(p.lines)
				return
			}
		}
	}()
	go func() { p.done <- cmd.Wait() }()
	s.t.Cleanup(func() { p.kill() })
	return p
}

func (p *proc) send(msg string) {
	p.t.Helper()
	p.sendRaw(msg + "\n")
}

// sendRaw writes bytes to the server's stdin as they are.
func (p *proc) sendRaw(b string) {
	p.t.Helper()
	_, err := io.WriteString(p.stdin, b)
	require.NoError(p.t, err)
}

// next returns the next stdout line.
func (p *proc) next() string {
	p.t.Helper()
	l, ok := testenv.ReceiveState(p.t, "a line on the server's stdout", p.lines, p.stderrReport)
	require.True(p.t, ok, "stdout closed; stderr:\n%s", p.stderrText())
	return l
}

func (p *proc) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait() int {
	p.t.Helper()
	testenv.ReceiveState(p.t, "the server to exit", p.done, p.stderrReport)
	return p.cmd.ProcessState.ExitCode()
}

// waitWithin waits for the process to exit and returns its exit code, failing after bound:
// only for an exit the behaviour under test promises long before bound (a signal that must
// not wait for a 300 s claim), the bound far from that longer wait (docs/testing.md).
func (p *proc) waitWithin(bound time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(bound):
		p.t.Fatalf("the server did not exit within %v; stderr:\n%s", bound, p.stderrText())
		return -1
	}
}

func (p *proc) stderrReport() string { return "stderr:\n" + p.stderrText() }

func (p *proc) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

var _ = runtime.NumCPU
