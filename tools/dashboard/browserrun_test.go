package dashboard_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// ArtifactsEnv names the directory the browser tests write their screenshots to (default
// <repo>/.cache/artifacts/dashboard, which .gitignore leaves out).
const ArtifactsEnv = "MCP_SCHEDULER_ARTIFACTS"

// chromiumPath is Debian's chromium package's executable (.ci/run installs it).
const chromiumPath = "/usr/bin/chromium"

// browserRun is one node script of testdata driving a real headless Chromium through
// playwright-core against a fixture's server. The script prints one JSON line per step
// ({"step": …}) and, where the Go side must act, waits for "next" on stdin.
type browserRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	steps  chan map[string]string
	stderr *testenv.SyncBuffer
	shots  string   // the screenshots' directory
	taken  []string // the screenshots taken so far
	seen   map[string]bool
}

// startBrowser runs testdata/script with BASE, TOKEN, PW_MODULES, CHROMIUM and SHOTS set,
// plus env. With CI=true a missing chromium or playwright-core fails the test.
func startBrowser(t *testing.T, f *fixture, script string, env ...string) *browserRun {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		testenv.Require(t, "Debian's chromium ("+chromiumPath+"; apt-get install -y chromium)")
	}
	mods := testenv.NodeModules(t, "playwright-core")
	node := testenv.LookPath(t, "node")
	shots := os.Getenv(ArtifactsEnv)
	if shots == "" {
		shots = filepath.Join(testenv.RepoRoot(), ".cache", "artifacts")
	}
	shots = filepath.Join(shots, "dashboard")
	require.NoError(t, os.MkdirAll(shots, 0o755))
	cmd := exec.CommandContext(f.ctx, node, filepath.Join("testdata", script))
	cmd.Env = append(append(os.Environ(), "BASE="+f.base, "TOKEN="+f.token, "PW_MODULES="+mods, "CHROMIUM="+chromiumPath,
		"SHOTS="+shots), env...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	b := &browserRun{t: t, cmd: cmd, stdin: stdin, steps: make(chan map[string]string), stderr: &testenv.SyncBuffer{},
		shots: shots, seen: map[string]bool{}}
	cmd.Stderr = b.stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	go func() {
		defer close(b.steps)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var s map[string]string
			if json.Unmarshal(sc.Bytes(), &s) == nil {
				b.steps <- s
			} else {
				t.Logf("browser: %s", sc.Text())
			}
		}
	}()
	return b
}

// step returns the script's next step that needs the test, logging screenshots and
// failures and failing on a page error; "" once the script printed "done".
func (b *browserRun) step() string {
	b.t.Helper()
	for {
		s, ok := testenv.ReceiveState(b.t, "the browser script's next step", b.steps,
			func() string { return "stderr:\n" + b.stderr.String() })
		if !ok {
			b.t.Fatalf("the browser script ended before its last step (after %v); stderr:\n%s", b.seen, b.stderr.String())
		}
		b.seen[s["step"]] = true
		switch s["step"] {
		case "screenshot":
			b.taken = append(b.taken, s["path"])
			b.t.Logf("screenshot: %s", s["path"])
		case "failure":
			b.t.Logf("the page at the failure: %s", s["page"])
		case "pageerror":
			b.t.Errorf("page error: %s", s["message"])
		case "done":
			return ""
		default:
			return s["step"]
		}
	}
}

// next lets the script go on after a step that waited for the test.
func (b *browserRun) next() {
	b.t.Helper()
	_, err := io.WriteString(b.stdin, "next\n")
	require.NoError(b.t, err)
}

// finish waits for the script to end and checks the screenshots it took: want of them, each
// a non-empty file in the artifacts directory.
func (b *browserRun) finish(want int) {
	b.t.Helper()
	require.NoError(b.t, b.stdin.Close())
	require.NoError(b.t, b.cmd.Wait(), b.stderr.String())
	require.Len(b.t, b.taken, want)
	for _, p := range b.taken {
		fi, err := os.Stat(p)
		require.NoError(b.t, err)
		require.Positive(b.t, fi.Size())
		require.True(b.t, strings.HasPrefix(p, b.shots))
	}
}
