package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// TestDemo_HTTPDashboard runs demo --http on the built binary: it prints the dashboard's URL,
// the dashboard's voyage endpoint shows the demo's missions with their landings once the
// voyage completes, the server stays up after the end with the demo's scheduler still
// running (a mission queued then runs and lands), and an interrupt ends it cleanly.
func TestDemo_HTTPDashboard(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "demo", "--http", "127.0.0.1:0")
	cmd.Env, cmd.Dir = s.env, s.repo
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errb testenv.SyncBuffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	dash := regexp.MustCompile(`^Dashboard: (http://127\.0\.0\.1:\d+)/#/voyage/(vyg_\w+)$`)
	var base, voyage string
	var out []string
	for base == "" || len(out) == 0 || !strings.HasPrefix(out[len(out)-1], "The dashboard stays up at "+base+" until you press Ctrl-C;") {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the demo ended early:\n%v\nstderr:\n%s", out, errb.String())
			out = append(out, l)
			if m := dash.FindStringSubmatch(l); m != nil {
				base, voyage = m[1], m[2]
			}
		case <-ctx.Done():
			t.Fatalf("the demo did not finish:\n%v\nstderr:\n%s", out, errb.String())
		}
	}
	resp, err := http.Get(base + "/api/voyages/" + voyage)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var g struct {
		Voyage   struct{ State string }
		Missions []struct{ ID, Key, State, Landing string }
		Edges    []struct{ Type string }
	}
	require.NoError(t, json.Unmarshal(b, &g))
	require.Equal(t, "completed", g.Voyage.State)
	require.Len(t, g.Missions, 7)
	landed := 0
	for _, m := range g.Missions {
		if m.Landing == "landed" {
			landed++
		}
	}
	require.Equal(t, 6, landed)
	require.NotEmpty(t, g.Edges)
	outline := ""
	for _, m := range g.Missions {
		if m.Key == "outline" {
			outline = m.ID
		}
	}
	require.NotEmpty(t, outline)
	var diff struct {
		Diff struct {
			Files []struct{ Path, Action string }
			Patch string
		}
	}
	getJSON(t, base+"/api/missions/"+outline+"/diff", &diff)
	require.Equal(t, []struct{ Path, Action string }{{"docs/outline.md", "added"}}, diff.Diff.Files, "the real attempt's diff")
	require.Contains(t, diff.Diff.Patch, "+# Outline")
	var log struct {
		Log struct{ Stdout string }
	}
	getJSON(t, base+"/api/missions/"+outline+"/log", &log)
	require.Contains(t, log.Log.Stdout, `"type":"worker.result"`, "the managed agent's own output")
	var agents struct {
		Agents []struct{ ID, Kind, Profile string }
	}
	getJSON(t, base+"/api/agents", &agents)
	require.Contains(t, agents.Agents, struct{ ID, Kind, Profile string }{"reference", "managed", "reference"},
		"the demo's profile is an agent the Agents page lists")
	requireLoopRunsOn(ctx, t, s, base, strings.Join(out, "\n"))
	// While the dashboard stays up, the repository and the data dir are still there (removed at
	// Ctrl-C, as the demo says), and the watch command it printed works as printed.
	text := strings.Join(out, "\n")
	require.Contains(t, text, "The temporary repository and data dir are removed when you press Ctrl-C;")
	require.NotContains(t, text, "are now removed")
	watchArgs := printedWatch(t, text)
	wcmd := exec.CommandContext(ctx, watchArgs[0], append(watchArgs[1:], "--once")...)
	wcmd.Env, wcmd.Dir = s.env, s.repo
	watched, err := wcmd.CombinedOutput()
	require.NoError(t, err, "%s", watched)
	require.Contains(t, string(watched), voyage, "the printed watch command shows the demo's voyage")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	require.NoError(t, cmd.Wait(), "stderr:\n%s", errb.String())
	_, err = os.Stat(watchArgs[2])
	require.ErrorIs(t, err, fs.ErrNotExist, "the data dir is removed at Ctrl-C")
}

// requireLoopRunsOn checks that the demo's scheduler still runs while its dashboard stays up:
// the header does not say that no loop leads, and a mission queued in the demo's repository
// (with the data dir the demo printed) is run by the demo's reference agent and lands.
func requireLoopRunsOn(ctx context.Context, t *testing.T, s *sandbox, base, text string) {
	t.Helper()
	var o struct {
		Status   struct{ Loop string }
		LoopIdle string `json:"loop_idle"`
	}
	getJSON(t, base+"/api/overview", &o)
	require.True(t, strings.HasPrefix(o.Status.Loop, "leading"), "the demo's loop still leads: %q", o.Status.Loop)
	require.Empty(t, o.LoopIdle)
	repo := regexp.MustCompile(`, repository (\S+)\n`).FindStringSubmatch(text)
	require.NotNil(t, repo, text)
	dataDir := printedWatch(t, text)[2]
	gcmd := exec.CommandContext(ctx, binary, "--data-dir", dataDir, "--json", "go", "After the voyage")
	gcmd.Env, gcmd.Dir = s.env, repo[1]
	created, err := gcmd.Output()
	require.NoError(t, err, "%s", created)
	var m struct{ ID string }
	require.NoError(t, json.Unmarshal(created, &m), "%s", created)
	var got struct {
		Mission struct{ State, Landing string }
	}
	testenv.WaitForState(t, "the mission queued after the voyage to land", func() bool {
		getJSON(t, base+"/api/missions/"+m.ID, &got)
		return got.Mission.Landing == "landed"
	}, func() string { return fmt.Sprintf("%+v", got) })
	require.Equal(t, "completed", got.Mission.State)
}

// printedWatch is the watch command the demo printed ("Watch it live from another terminal:
// PROGRAM --data-dir DIR watch"), split into its words (the tests' paths hold no spaces).
// The program is this test's binary, which is not on PATH: the demo names it by its path.
func printedWatch(t *testing.T, text string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "Watch it live from another terminal: ")
	require.True(t, ok, text)
	line, _, _ := strings.Cut(rest, "\n")
	words := strings.Fields(line)
	require.Len(t, words, 4, line)
	require.Equal(t, []string{binary, "--data-dir", "watch"}, []string{words[0], words[1], words[3]}, line)
	return words
}

// TestDaemon_HTTPDashboard: daemon --http serves the dashboard beside the loop, behind the
// token when one is configured (a page load goes to the login page, the API answers 401
// without it and 200 with it).
func TestDaemon_HTTPDashboard(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.start([]string{EnvToken + "=daemon-token"}, "daemon", "--http", "127.0.0.1:0")
	var addr string
	testenv.WaitFor(t, "the daemon's HTTP listener", func() bool {
		if m := servingAddr.FindStringSubmatch(p.stderrText()); m != nil {
			addr = m[1]
			return true
		}
		return p.cmd.ProcessState != nil
	})
	require.NotEmpty(t, addr, "daemon exited: %s", p.stderrText())
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, header map[string]string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		require.NoError(t, err)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	resp := get("/", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/login", resp.Header.Get("Location"))
	require.Equal(t, http.StatusUnauthorized, get("/api/overview", nil).StatusCode)
	require.Equal(t, http.StatusOK, get("/api/overview", map[string]string{"Authorization": "Bearer daemon-token"}).StatusCode)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.NoError(t, json.Unmarshal(b, v), string(b))
}

// TestDemo_HTTPNonLoopbackNamesWhatExists: demo --http on a non-loopback address without a
// token is refused before anything is built, and the message names the ways this command
// really has ($MCP_SCHEDULER_TOKEN, [http] token_file, a loopback address), not a --token
// flag it lacks.
func TestDemo_HTTPNonLoopbackNamesWhatExists(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "demo", "--http", "0.0.0.0:1")
	cmd.Env, cmd.Dir = s.env, s.repo
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	require.Equal(t, 2, exit.ExitCode(), "a usage mistake, as --metrics 0.0.0.0:P: %s", out)
	require.Contains(t, string(out), "demo --http 0.0.0.0:1: not a loopback address and no bearer token; set $MCP_SCHEDULER_TOKEN (or [http] token_file in the config file) or use --http 127.0.0.1:PORT")
	require.NotContains(t, string(out), "(--token,")
	require.NotContains(t, string(out), "mcp-scheduler demo: voyage", "refused before the demo starts")
}
