package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// stdioServer is `mcp-scheduler serve` over stdio with an MCP client (mcp-go) on the other
// end, started in the repository like an MCP client starts it.
type stdioServer struct {
	c   *client.Client
	cmd *exec.Cmd
	log string
}

func (e *xenv) serveStdio(name string, extraEnv ...string) *stdioServer {
	e.t.Helper()
	s := &stdioServer{log: filepath.Join(e.logs, name+".log")}
	logf, err := os.Create(s.log)
	require.NoError(e.t, err)
	env := append(append([]string{}, e.env...), extraEnv...)
	tr := transport.NewStdioWithOptions(e.bin, env, []string{"serve"}, transport.WithCommandFunc(
		func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env, cmd.Dir, cmd.Stderr = env, e.repo, logf
			s.cmd = cmd
			return cmd, nil
		}))
	s.c = client.NewClient(tr)
	require.NoError(e.t, s.c.Start(e.ctx)) // the server lives as long as the client (not the timeout below)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	var ir mcp.InitializeRequest
	ir.Params.ClientInfo = mcp.Implementation{Name: "crash-test", Version: "0"}
	_, err = s.c.Initialize(ctx, ir)
	require.NoError(e.t, err)
	e.t.Cleanup(func() {
		_ = s.c.Close()
		logf.Close()
	})
	return s
}

// call calls a tool that must succeed and decodes its structured result.
func (s *stdioServer) call(t *testing.T, name string, args map[string]any, v any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = name, args
	r, err := s.c.CallTool(ctx, req)
	require.NoError(t, err, name)
	require.False(t, r.IsError, "%s: %v", name, r.Content)
	if v != nil {
		raw, err := json.Marshal(r.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, v))
	}
}

func (s *stdioServer) logText() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// TestCrash_RealClaudeCodeAgents (issue 7, e2e 4): a Main Agent (an MCP client over stdio)
// dispatches a voyage whose managed agents are real Claude Code processes, each writing its
// file through its own Write tool against the scripted model server, whose first answer takes
// 4 s. `mcp-scheduler serve` is killed with SIGKILL while agents wait for the model; the agents
// live on; the client starts the server again, which takes over, re-attaches them and finishes
// the voyage. Nothing is lost (every file lands) or doubled (one commit per file, one agent and
// two model requests per mission, attempt 1 everywhere); usage is recorded; no process is left.
func TestCrash_RealClaudeCodeAgents(t *testing.T) {
	claude := testenv.NodeBin(t, "claude")
	srv := modelserver.Start(t)
	var mu sync.Mutex
	keyOf := map[string]string{} // mission id → key
	usage := modelserver.Usage{InputTokens: 200, OutputTokens: 40}
	srv.Script(func(r *modelserver.Request) modelserver.Turn {
		ws := r.Workspace()
		mu.Lock()
		key := keyOf[filepath.Base(filepath.Dir(ws))]
		mu.Unlock()
		if ws == "" || key == "" {
			return modelserver.Turn{Err: &modelserver.APIError{Status: 500, Message: "unknown workspace " + ws}}
		}
		if r.LastIsToolResult() {
			return modelserver.Text("Created f/"+key+".txt.", usage)
		}
		return modelserver.Turn{Text: "Writing f/" + key + ".txt.", Usage: usage, Delay: 4 * time.Second,
			Calls: []modelserver.Call{{Name: "Write", Input: map[string]any{"file_path": filepath.Join(ws, "f", key+".txt"), "content": key + "\n"}}}}
	})
	profile := fmt.Sprintf(`
[[profiles]]
name = "claude"
runtime = "claude-code"
command = [%q]
env = ["PATH"]
secret_env = ["ANTHROPIC_API_KEY"]
set_env = { ANTHROPIC_BASE_URL = %q }
permission_mode = "acceptEdits"
max_retries = 0
max_concurrency = 3
`, claude, srv.URL())
	e := newXEnv(t, xsettings{LeaderLease: 2 * time.Second, LeaseTTL: 20 * time.Second, MaxConcurrency: 3, Extra: profile})
	apiKey := "ANTHROPIC_API_KEY=sk-test-crash"

	first := e.serveStdio("serve-1", apiKey)
	keys := []string{"alpha", "beta", "gamma", "delta"}
	var missions []map[string]any
	for _, k := range keys {
		missions = append(missions, map[string]any{"key": k, "title": "write f/" + k + ".txt",
			"brief": "Create the file f/" + k + ".txt containing the line " + k + ".", "write_area": []string{"f/" + k + ".txt"}})
	}
	var disp struct {
		Voyage struct {
			ID string `json:"id"`
		} `json:"voyage"`
		IDs map[string]string `json:"ids"`
	}
	first.call(t, "dispatch", map[string]any{"title": "crash with real agents", "missions": missions}, &disp)
	mu.Lock()
	for k, id := range disp.IDs {
		keyOf[id] = k
	}
	mu.Unlock()

	// Kill the server while real agents wait for the model.
	var running []string
	e.waitUntil("two Claude Code agents running", func() bool {
		running = running[:0]
		for _, m := range e.missions() {
			if m.State == domain.StateRunning && len(e.attemptAgents(m.ID)) > 0 {
				running = append(running, m.ID)
			}
		}
		return len(running) >= 2
	})
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGKILL))
	_ = first.cmd.Wait()
	alive := 0
	for _, id := range running {
		alive += len(e.attemptAgents(id))
	}
	require.Positive(t, alive, "the Claude Code agents outlive the server that started them")
	for _, r := range srv.ModelRequests(modelserver.Anthropic) {
		require.NotContains(t, string(r.Body), "CLAUDECODE", "the agents never see a Main Agent's variables")
	}

	restarted := time.Now()
	second := e.serveStdio("serve-2", apiKey)
	pid := second.cmd.Process.Pid
	lead := e.waitUntil("the restarted server leads", func() bool { return leaderPID(e.leader().Owner) == pid })
	e.waitUntil("the restarted server re-attaches the agents", func() bool {
		return strings.Contains(second.logText(), "re-attached agent")
	})
	t.Logf("restart → leading %v (leader lease 2 s), → first agent re-attached %v", lead.Round(time.Millisecond),
		time.Since(restarted).Round(time.Millisecond))
	e.waitUntil("the voyage completes", func() bool {
		var st struct {
			Voyage struct {
				State string `json:"state"`
			} `json:"voyage"`
		}
		second.call(t, "voyage_status", map[string]any{"voyage_id": disp.Voyage.ID}, &st)
		return st.Voyage.State == string(domain.VoyageCompleted)
	})
	require.Contains(t, second.logText(), "re-attached agent")

	perWorkspace := map[string]int{}
	for _, r := range srv.ModelRequests(modelserver.Anthropic) {
		perWorkspace[filepath.Base(filepath.Dir(r.Workspace()))]++
	}
	launched := e.launchedAttempts()
	for _, k := range keys {
		id := disp.IDs[k]
		body, ok := e.file("f/" + k + ".txt")
		require.True(t, ok, k)
		require.Equal(t, k+"\n", body)
		require.Len(t, strings.Fields(e.git("log", "--format=%H", "main", "--", "f/"+k+".txt")), 1, "%s changed main once", k)
		d := e.mission(id)
		require.Equal(t, 1, launched[id], "%s: one Claude Code process", k)
		require.Equal(t, 2, perWorkspace[id], "%s: the tool call and the final answer, nothing repeated", k)
		// One completed attempt; an earlier one can only have been given back before its agent
		// started (the crash came between acquire and launch).
		completed := 0
		for _, at := range d.Attempts {
			if at.Outcome == "completed" {
				completed++
				require.Equal(t, domain.Usage{InputTokens: 400, OutputTokens: 80, CostUSD: at.Usage.CostUSD}, at.Usage,
					"%s: two scripted turns of 200 + 40 tokens, counted once", k)
				require.Positive(t, at.Usage.CostUSD, "%s: cost recorded", k)
				continue
			}
			require.Equal(t, domain.OutcomeReleased, at.Outcome, "%s: %s", k, jsonOf(d.Attempts))
		}
		require.Equal(t, 1, completed, k)
		if slices.Contains(running, id) {
			require.Equal(t, 1, d.Mission.Attempt, "%s was running at the crash: re-attached, not run again", k)
		}
	}
	require.Empty(t, e.leftovers(), "no Claude Code process is left")
	require.NoError(t, second.c.Close(), "serve exits cleanly when its client goes")
	require.Equal(t, 0, second.cmd.ProcessState.ExitCode())
	e.waitNoStrays()
}

// attemptAgents lists the live processes of a mission's current agent groups.
func (e *xenv) attemptAgents(missionID string) []int {
	var out []int
	for dir, rec := range e.agentRecords() {
		if strings.Contains(dir, "/"+missionID+"/") {
			out = append(out, testenv.GroupMembers(rec.PGID)...)
		}
	}
	return out
}
