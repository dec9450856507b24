package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// The Main Agent over MCP (issue 7, e2e 1 and 2): the real Claude Code CLI, driven by the
// scripted model server, is an MCP client of `mcp-scheduler serve` (stdio, --mcp-config with
// --strict-mcp-config); the model makes it call dispatch with a four-mission voyage, then
// voyage_status until the voyage has settled. The server's managed agents are real CLIs too,
// against the same model server: the script tells the requests apart by API and by the
// working directory each CLI reports (the Main Agent works in the repository, a child in its
// worktree). A child reads its brief (the prompt only points to the file), then writes the
// file the brief names. The server command is the test binary acting as a relay
// (mainagent_relay_test.go), which records the server's stdout for the JSON-RPC check.

// mcpServerName is the name of our server in the Main Agent's MCP configuration.
const mcpServerName = "scheduler"

// voyageFile is one mission of the voyage: the file it creates and the line it holds.
type voyageFile struct{ key, path, line string }

var voyageFiles = []voyageFile{
	{"alpha", "notes/alpha.md", "Alpha: the first note."},
	{"beta", "notes/beta.md", "Beta: the second note."},
	{"gamma", "docs/gamma.md", "Gamma: the third note."},
	{"delta", "docs/delta.md", "Delta: written after alpha landed."},
}

// dispatchArgs is the dispatch call the Main Agent makes: four missions with disjoint write
// areas, delta depending on alpha.
func dispatchArgs() map[string]any {
	var missions []any
	for _, f := range voyageFiles {
		m := map[string]any{"key": f.key, "title": "Write " + f.path,
			"brief":      fmt.Sprintf("Create the file `%s` containing the line `%s`.", f.path, f.line),
			"write_area": []string{f.path}, "acceptance_criteria": []string{f.path + " exists and holds the line"}}
		if f.key == "delta" {
			m["depends_on"] = []string{"alpha"}
		}
		missions = append(missions, m)
	}
	return map[string]any{"title": "Four notes", "goal": "Write four notes, one per mission", "missions": missions}
}

var (
	briefPointerRe = regexp.MustCompile(`described in the file (\S+?)\. Read that file`)
	briefTaskRe    = regexp.MustCompile("Create the file `([^`]+)` containing the line `([^`]+)`")
	voyageIDRe     = regexp.MustCompile(`"(vyg_[0-9A-Z]{26})"`)
)

// mainAgentScript answers the Main Agent (Claude Code in the repository) and the children
// (Claude Code or Codex in worktrees). polls counts the Main Agent's voyage_status calls.
type mainAgentScript struct {
	repo  string
	mu    sync.Mutex
	polls int
	seen  []string // every voyage state the Main Agent was told
}

// maxPolls bounds the Main Agent's voyage_status calls (one every pollDelay).
const (
	maxPolls  = 400
	pollDelay = 250 * time.Millisecond
)

func (s *mainAgentScript) answer(r *modelserver.Request) modelserver.Turn {
	if r.API == modelserver.Anthropic && r.Workspace() == s.repo {
		return s.mainAgent(r)
	}
	return childTurn(r)
}

// mainAgent: dispatch, then voyage_status until the voyage is no longer open or active.
func (s *mainAgentScript) mainAgent(r *modelserver.Request) modelserver.Turn {
	results := r.ToolResults()
	if len(results) == 0 {
		return modelserver.Turn{Text: "I will dispatch the voyage.", Usage: perTurn,
			Calls: []modelserver.Call{{Name: "mcp__" + mcpServerName + "__dispatch", Input: dispatchArgs()}}}
	}
	last := results[len(results)-1]
	m := voyageIDRe.FindStringSubmatch(results[0])
	if m == nil {
		return modelserver.Text("dispatch gave no voyage id: "+tail(results[0], 500), perTurn)
	}
	status := func(delay time.Duration) modelserver.Turn {
		s.mu.Lock()
		s.polls++
		n := s.polls
		s.mu.Unlock()
		if n > maxPolls {
			return modelserver.Text("gave up waiting for the voyage", perTurn)
		}
		return modelserver.Turn{Text: "Checking the voyage.", Usage: perTurn, Delay: delay,
			Calls: []modelserver.Call{{Name: "mcp__" + mcpServerName + "__voyage_status", Input: map[string]any{"voyage_id": m[1]}}}}
	}
	if len(results) == 1 {
		return status(0)
	}
	var vs struct {
		Voyage struct{ State string } `json:"voyage"`
	}
	if err := json.Unmarshal([]byte(last), &vs); err != nil {
		return modelserver.Text("voyage_status did not answer JSON: "+tail(last, 500), perTurn)
	}
	s.mu.Lock()
	s.seen = append(s.seen, vs.Voyage.State)
	s.mu.Unlock()
	switch vs.Voyage.State {
	case "open", "active":
		return status(pollDelay)
	}
	return modelserver.Text("The voyage is "+vs.Voyage.State+".", perTurn)
}

// childTurn is a managed agent's model: read the brief the prompt points to (Claude Code's
// Read, Codex's shell), write the file it names (Claude Code's Write, Codex's apply_patch),
// then report.
func childTurn(r *modelserver.Request) modelserver.Turn {
	results := r.ToolResults()
	switch len(results) {
	case 0:
		var brief string
		walkRequest(r, func(s string) bool {
			if m := briefPointerRe.FindStringSubmatch(s); m != nil {
				brief = m[1]
				return false
			}
			return true
		})
		if brief == "" {
			return modelserver.Turn{Err: &modelserver.APIError{Status: 400, Message: "e2e: the prompt does not point to a brief"}}
		}
		call := modelserver.Call{Name: "Read", Input: map[string]any{"file_path": brief}}
		if r.API == modelserver.OpenAI {
			call = modelserver.Call{Name: "exec_command", Input: map[string]any{"cmd": "cat " + brief}}
		}
		return modelserver.Turn{Text: "Reading the brief.", Usage: perTurn, Calls: []modelserver.Call{call}}
	case 1:
		m := briefTaskRe.FindStringSubmatch(results[0])
		if m == nil {
			return modelserver.Text("The brief names no file to create.", perTurn)
		}
		call := modelserver.Call{Name: "Write", Input: map[string]any{"file_path": filepath.Join(r.Workspace(), m[1]), "content": m[2] + "\n"}}
		if r.API == modelserver.OpenAI {
			call = modelserver.Call{Name: "apply_patch", Freeform: modelserver.AddFilePatch(m[1], m[2]+"\n")}
		}
		return modelserver.Turn{Text: "Writing " + m[1] + ".", Usage: perTurn, Calls: []modelserver.Call{call}}
	}
	return modelserver.Text("Created the file the brief asked for.", perTurn)
}

// walkRequest calls f on every string of the request body until f returns false.
func walkRequest(r *modelserver.Request, f func(string) bool) {
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			return f(x)
		case []any:
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
		case map[string]any:
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
		}
		return true
	}
	walk(r.JSON)
}

// mainAgentRun is one Main Agent session against a fresh repository and data dir.
type mainAgentRun struct {
	t         *testing.T
	srv       *modelserver.Server
	script    *mainAgentScript
	repo      string
	data      string
	home      string
	relayOut  string // the server's stdout as the relay saw it
	relayErr  string // the server's stderr
	mainLines []map[string]any
	mainErr   string
	mainExit  int
	wall      time.Duration
}

// runMainAgent writes the server configuration with the child profile, starts Claude Code
// as the Main Agent in the repository and waits for it and for the server it started to end.
func runMainAgent(t *testing.T, srv *modelserver.Server, child agent.Profile, extraEnv ...string) *mainAgentRun {
	t.Helper()
	claude := testenv.NodeBin(t, "claude")
	self, err := os.Executable()
	require.NoError(t, err)
	root := privateTempDir(t)
	r := &mainAgentRun{t: t, repo: newRepo(t), data: filepath.Join(root, "data"), home: filepath.Join(root, "home"),
		relayOut: filepath.Join(root, "server.stdout"), relayErr: filepath.Join(root, "server.stderr")}
	require.NoError(t, os.MkdirAll(r.home, 0o700))
	r.srv = srv
	r.script = &mainAgentScript{repo: r.repo}
	r.srv.Script(r.script.answer)

	cfgPath := filepath.Join(root, "config.toml")
	writeServerConfig(t, cfgPath, child)
	mcpConfig := filepath.Join(root, "mcp.json")
	writeJSONFile(t, mcpConfig, map[string]any{"mcpServers": map[string]any{mcpServerName: map[string]any{
		"type": "stdio", "command": self, "args": []string{binary, "serve"},
		"env": map[string]string{relayEnvOut: r.relayOut, relayEnvErr: r.relayErr,
			"MCP_SCHEDULER_CONFIG": cfgPath, "MCP_SCHEDULER_DATA_DIR": r.data, "NO_COLOR": "1"}}}})

	ctx, cancel := context.WithTimeout(context.Background(), WorkTimeout(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "Dispatch the four-note voyage and wait until it completes.",
		"--output-format", "stream-json", "--verbose",
		"--mcp-config", mcpConfig, "--strict-mcp-config", "--allowedTools", "mcp__"+mcpServerName)
	cmd.Dir = r.repo
	cmd.Env = append(append(testenv.GitEnv(), "PATH="+os.Getenv("PATH"), "HOME="+r.home,
		"ANTHROPIC_BASE_URL="+r.srv.URL(), "ANTHROPIC_API_KEY="+apiKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_MAX_RETRIES=0"), extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	r.wall = time.Since(start)
	r.mainErr = stderr.String()
	if cmd.ProcessState != nil {
		r.mainExit = cmd.ProcessState.ExitCode()
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), "Claude Code's stream-json: %s", sc.Text())
		r.mainLines = append(r.mainLines, ev)
	}
	require.NoError(t, err, "the Main Agent: stderr %s\nserver stderr:\n%s", r.mainErr, tail(r.readFile(r.relayErr), 8000))
	// Claude Code stops its stdio server when it exits (SIGINT, then SIGTERM): wait for the
	// server to say so before reading what it left.
	testenv.WaitForState(t, "the server to stop after the Main Agent exited", func() bool {
		return strings.Contains(r.readFile(r.relayErr), "mcp-scheduler stopped")
	}, func() string { return "its stderr:\n" + tail(r.readFile(r.relayErr), 8000) })
	return r
}

func (r *mainAgentRun) readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// writeServerConfig writes the server's TOML: the child profile, four agents at once, short
// retry back-off, the default resource thresholds (on a loaded machine they start fewer
// agents, never none: the tests run in the conditions of use), debug logging (on stderr:
// stdout must stay JSON-RPC only).
func writeServerConfig(t *testing.T, path string, p agent.Profile) {
	t.Helper()
	cfg := map[string]any{
		"log_level": "debug",
		"scheduler": map[string]any{"tick": "250ms", "max_concurrency": 4, "backoff_initial": "200ms", "backoff_max": "1s"},
		"profiles":  []agent.Profile{p},
	}
	var b bytes.Buffer
	require.NoError(t, toml.NewEncoder(&b).Encode(cfg))
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o600))
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

// result is the Main Agent's final stream-json result event.
func (r *mainAgentRun) result() map[string]any {
	for i := len(r.mainLines) - 1; i >= 0; i-- {
		if r.mainLines[i]["type"] == "result" {
			return r.mainLines[i]
		}
	}
	r.t.Fatalf("the Main Agent printed no result; stderr: %s", r.mainErr)
	return nil
}

// openEngine opens the server's database, once the server stopped.
func (r *mainAgentRun) openEngine() (*engine.Engine, func()) {
	r.t.Helper()
	st, closeDB := openStore(r.t, r.data)
	return engine.New(st, engine.Options{}), closeDB
}

// openStore opens the database of a data dir.
func openStore(t *testing.T, data string) (engine.Store, func()) {
	t.Helper()
	st, err := teststore.Open(context.Background(), filepath.Join(data, "mcp-scheduler.db"))
	require.NoError(t, err)
	return st, func() { require.NoError(t, st.Close()) }
}

// checkStdoutJSONRPC: every line the server wrote on stdout is one JSON-RPC 2.0 message, and
// the answers to initialize, tools/list and the tool calls are among them.
func (r *mainAgentRun) checkStdoutJSONRPC(minCalls int) {
	r.t.Helper()
	raw := r.readFile(r.relayOut)
	require.NotEmpty(r.t, raw)
	require.True(r.t, strings.HasSuffix(raw, "\n"), "stdout ends with a whole line")
	responses := 0
	for _, line := range strings.Split(strings.TrimSuffix(raw, "\n"), "\n") {
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		require.NoError(r.t, json.Unmarshal([]byte(line), &m), "stdout carries only JSON-RPC, got %q", line)
		require.Equal(r.t, "2.0", m.JSONRPC, line)
		require.True(r.t, m.Method != "" || (m.ID != nil && (m.Result != nil || m.Error != nil)), "a request, notification or response: %q", line)
		if m.Result != nil {
			responses++
		}
	}
	require.GreaterOrEqual(r.t, responses, 2+minCalls, "initialize, tools/list and %d tool calls answered", minCalls)
}

// checkVoyageLanded checks, in the server's database and the repository, that the voyage
// completed with each of the four files landed exactly once on main (also in the checkout),
// and returns the voyage for the usage checks.
func (r *mainAgentRun) checkVoyageLanded(eng *engine.Engine) (engine.VoyageDetail, []engine.MissionDetail) {
	r.t.Helper()
	ctx := context.Background()
	ms, err := eng.ListMissions(ctx, engine.MissionFilter{Limit: 100})
	require.NoError(r.t, err)
	require.Len(r.t, ms, len(voyageFiles), "exactly the dispatched missions: %s", dumpMissions(ctx, eng))
	v, err := eng.VoyageStatus(ctx, ms[0].VoyageID)
	require.NoError(r.t, err)
	require.Equal(r.t, domain.VoyageCompleted, v.Voyage.State, dumpMissions(ctx, eng))
	byKey := map[string]engine.MissionDetail{}
	for _, m := range ms {
		d, err := eng.GetMission(ctx, m.ID)
		require.NoError(r.t, err)
		require.Equal(r.t, domain.StateCompleted, m.State, m.Key)
		require.Equal(r.t, domain.LandingLanded, m.Landing, m.Key)
		byKey[m.Key] = d
	}
	var out []engine.MissionDetail
	for _, f := range voyageFiles {
		d, ok := byKey[f.key]
		require.True(r.t, ok, "mission %s", f.key)
		out = append(out, d)
		body, ok := showFile(r.t, r.repo, "main", f.path)
		require.True(r.t, ok, "%s on main", f.path)
		require.Equal(r.t, f.line+"\n", body)
		// Exactly once: one commit adds the file, and one landing on main's first-parent line
		// (a fast-forward to the mission's commit, or a merge of its branch) names the mission.
		require.Len(r.t, strings.Fields(gitRun(r.t, r.repo, "log", "--format=%H", "--diff-filter=A", "main", "--", f.path)), 1, f.path)
		require.Len(r.t, strings.Fields(gitRun(r.t, r.repo, "log", "--first-parent", "--format=%H", "--grep", "Mission-Id: "+d.Mission.ID, "main")), 1, f.key)
		// main is checked out in the repository: the fast-forward reached the files there.
		got, err := os.ReadFile(filepath.Join(r.repo, f.path))
		require.NoError(r.t, err)
		require.Equal(r.t, f.line+"\n", string(got))
	}
	require.Empty(r.t, gitRun(r.t, r.repo, "status", "--porcelain"), "the person's checkout is clean")
	// delta waited for alpha to land.
	require.False(r.t, byKey["delta"].Attempts[0].StartedAt.Before(byKey["alpha"].Landings[len(byKey["alpha"].Landings)-1].At),
		"delta started after alpha landed")
	return v, out
}

// checkMainAgent: the Main Agent saw our tools, dispatched once, polled voyage_status until
// it read "completed", and ended with that.
func (r *mainAgentRun) checkMainAgent() {
	r.t.Helper()
	res := r.result()
	require.Equal(r.t, false, res["is_error"], "%v", res)
	require.Equal(r.t, "The voyage is completed.", res["result"])
	require.Equal(r.t, 0, r.mainExit)
	var init map[string]any
	for _, ev := range r.mainLines {
		if ev["type"] == "system" && ev["subtype"] == "init" {
			init = ev
		}
	}
	require.NotNil(r.t, init)
	require.Contains(r.t, init["mcp_servers"], map[string]any{"name": mcpServerName, "status": "connected", "source": "dynamic"})
	dispatches, statuses := 0, 0
	for _, ev := range r.mainLines {
		if ev["type"] != "assistant" {
			continue
		}
		b, _ := json.Marshal(ev["message"])
		dispatches += strings.Count(string(b), `"name":"mcp__`+mcpServerName+`__dispatch"`)
		statuses += strings.Count(string(b), `"name":"mcp__`+mcpServerName+`__voyage_status"`)
	}
	require.Equal(r.t, 1, dispatches)
	require.GreaterOrEqual(r.t, statuses, 1)
	r.script.mu.Lock()
	defer r.script.mu.Unlock()
	require.Equal(r.t, "completed", r.script.seen[len(r.script.seen)-1])
	for _, st := range r.script.seen[:len(r.script.seen)-1] {
		require.Contains(r.t, []string{"open", "active"}, st)
	}
}

// childRequests returns the model requests of the managed agents, grouped by workspace.
func (r *mainAgentRun) childRequests(api modelserver.API) map[string][]*modelserver.Request {
	out := map[string][]*modelserver.Request{}
	for _, q := range r.srv.ModelRequests(api) {
		if ws := q.Workspace(); ws != r.repo {
			out[ws] = append(out[ws], q)
		}
	}
	return out
}
