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
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// ArtifactsEnv names the directory the browser test writes its screenshots to (default
// <repo>/.cache/artifacts/dashboard, which .gitignore leaves out).
const ArtifactsEnv = "MCP_SCHEDULER_ARTIFACTS"

// chromiumPath is Debian's chromium package's executable (.ci/run installs it).
const chromiumPath = "/usr/bin/chromium"

// TestBrowser drives the dashboard in a real headless Chromium (testdata/browser.mjs, through
// playwright-core) against a real server with a voyage in flight: requests without the token,
// with the raw token as cookie or from a foreign Origin are refused; the login page sets the
// session; the graph shows every mission with its state and every edge kind; a mission that
// starts turns running on the page without a reload; resolving its escalation from the page
// sends it back to pending; a screenshot of each page is kept (their paths are logged).
func TestBrowser(t *testing.T) {
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

	const token = "browser-test-token"
	f := start(t, token)
	d := f.voyage()
	states := map[string]domain.MissionState{}
	for k := range d.IDs {
		states[k] = domain.StatePending
	}
	ids, _ := json.Marshal(d.IDs)
	st, _ := json.Marshal(states)
	cmd := exec.CommandContext(f.ctx, node, "testdata/browser.mjs")
	cmd.Env = append(os.Environ(), "BASE="+f.base, "TOKEN="+token, "VOYAGE="+d.Voyage.ID, "IDS="+string(ids),
		"STATES="+string(st), "PW_MODULES="+mods, "CHROMIUM="+chromiumPath, "SHOTS="+shots)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })

	steps := make(chan map[string]string)
	go func() {
		defer close(steps)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var s map[string]string
			if json.Unmarshal(sc.Bytes(), &s) == nil {
				steps <- s
			} else {
				t.Logf("browser: %s", sc.Text())
			}
		}
	}()
	next := func() { _, err := io.WriteString(stdin, "next\n"); require.NoError(t, err) }
	var shotsTaken []string
	var changed time.Time // when mission a started (the state change the page must show)
	seen := map[string]bool{}
	for done := false; !done; {
		var s map[string]string
		var ok bool
		select {
		case s, ok = <-steps:
		case <-time.After(5 * time.Minute):
			t.Fatalf("the browser script is silent; stderr:\n%s", stderr.String())
		}
		if !ok {
			t.Fatalf("the browser script ended before its last step (after %v); stderr:\n%s", seen, stderr.String())
		}
		seen[s["step"]] = true
		switch s["step"] {
		case "screenshot":
			shotsTaken = append(shotsTaken, s["path"])
			t.Logf("screenshot: %s", s["path"])
		case "failure":
			t.Logf("the page at the failure: %s", s["page"])
		case "pageerror":
			t.Errorf("page error: %s", s["message"])
		case "graph": // the page shows the graph: start mission a
			changed = time.Now()
			f.run(d.IDs["a"])
			next()
		case "live": // measured, never asserted (docs/benchmarks.md)
			t.Logf("state change to the page in the browser: %s (includes playwright's wait and the stdout pipe)", time.Since(changed))
		case "mission": // the mission page shows it running: it blocks with an escalation
			m, err := f.eng.Mission(f.ctx, d.IDs["a"])
			require.NoError(t, err)
			f.block(m)
			next()
		case "resolved": // the page resolved the escalation with retry
			m, err := f.eng.Mission(f.ctx, d.IDs["a"])
			require.NoError(t, err)
			require.Equal(t, domain.StatePending, m.State)
			// Its next attempt fails: the mission page must say how (kind and summary).
			ran := f.run(d.IDs["a"])
			_, err = f.eng.Fail(f.ctx, ran.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureTest,
				Summary: "3 tests failed in outline_test.go"}})
			require.NoError(t, err)
			f.run(d.IDs["c"]) // something running for the agents page
			next()
		case "done":
			done = true
		}
	}
	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait(), stderr.String())
	for _, want := range []string{"refused", "live"} {
		require.True(t, seen[want], "step %s", want)
	}
	require.Len(t, shotsTaken, 6)
	for _, p := range shotsTaken {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.Positive(t, fi.Size())
		require.True(t, strings.HasPrefix(p, shots))
	}
}
