package adapters_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// The real CLIs (Claude Code 2.1.332, Codex 0.171.0, installed by .ci/install-node-packages)
// run as child agents with the Invocation the adapters build, against e2e/modelserver on
// 127.0.0.1, in real git worktrees, with a private HOME and CODEX_HOME under t.TempDir().

const apiKey = "test-key-0123"

var perTurn = modelserver.Usage{InputTokens: 100, OutputTokens: 20}

// cliSetup is one real-CLI attempt ready to launch.
type cliSetup struct {
	adapter agent.Adapter
	profile agent.Profile
	req     agent.LaunchRequest
	srv     *modelserver.Server
	wt      string
}

func zero() *int { n := 0; return &n }

func claudeSetup(t *testing.T) cliSetup {
	t.Helper()
	bin := testenv.NodeBin(t, "claude")
	srv := modelserver.Start(t)
	wt := worktree(t)
	p := agent.Profile{
		Name: "claude-test", Runtime: agent.RuntimeClaudeCode, Command: []string{bin},
		SetEnv:     map[string]string{"ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": apiKey},
		MaxRetries: zero(),
	}
	return cliSetup{adapter: adapters.NewClaudeCode(), profile: p, req: request(t, wt), srv: srv, wt: wt}
}

func codexSetup(t *testing.T) cliSetup {
	t.Helper()
	bin := testenv.NodeBin(t, "codex")
	testenv.LookPath(t, "node") // codex's launcher is a node script
	srv := modelserver.Start(t)
	wt := worktree(t)
	p := agent.Profile{
		Name: "codex-test", Runtime: agent.RuntimeCodex, Command: []string{bin},
		Models:     []string{"gpt-5.5"},
		SetEnv:     map[string]string{adapters.CodexBaseURLEnv: srv.OpenAIBaseURL(), "OPENAI_API_KEY": apiKey},
		MaxRetries: zero(),
	}
	return cliSetup{adapter: adapters.Codex{}, profile: p, req: request(t, wt), srv: srv, wt: wt}
}

// request is the launch request of attempt 1 of mission m-1 in workspace wt, with the
// allow-list passing PATH only.
func request(t *testing.T, wt string) agent.LaunchRequest {
	return agent.LaunchRequest{
		Start: agent.Start{
			Type: agent.TypeStart, Protocol: agent.Version, MissionID: "m-1", Attempt: 1, Epoch: 7,
			Title: "write hello.txt", Brief: "Create hello.txt.", Workspace: wt,
		},
		BriefFile: writeBrief(t, wt, "# Mission m-1\n\nCreate hello.txt containing a greeting.\n"),
		Self:      "/nonexistent/mcp-scheduler",
		StateDir:  t.TempDir(),
		Env:       map[string]string{"PATH": os.Getenv("PATH")},
	}
}

func (c cliSetup) launch(t *testing.T, onLine func([]byte) string) run {
	t.Helper()
	inv, err := c.adapter.Invocation(c.profile, c.req)
	require.NoError(t, err)
	return launch(t, c.adapter, inv, onLine)
}

func TestClaudeCodeReal_WritesFileAndCompletesWithUsageAndCost(t *testing.T) {
	c := claudeSetup(t)
	c.srv.Script(modelserver.WriteFile("hello.txt", "hello from claude\n", perTurn))
	r := c.launch(t, nil)

	require.Empty(t, r.errs, "stderr: %s", r.stderr)
	require.Equal(t, agent.StatusCompleted, r.result.Status, "stderr: %s", r.stderr)
	body, err := os.ReadFile(filepath.Join(c.wt, "hello.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello from claude\n", string(body))
	require.Equal(t, "done", r.result.Summary)
	require.Equal(t, []string{filepath.Join(c.wt, "hello.txt")}, r.result.Artifacts)
	require.NotNil(t, r.result.Usage)
	require.Equal(t, int64(200), r.result.Usage.InputTokens)
	require.Equal(t, int64(40), r.result.Usage.OutputTokens)
	require.Greater(t, r.result.Usage.CostUSD, 0.0)
	require.Equal(t, 0, r.exit.Code)

	reqs := c.srv.ModelRequests(modelserver.Anthropic)
	require.Len(t, reqs, 2)
	require.Contains(t, reqs[0].ToolNames(), "Write")
	require.Equal(t, c.wt, reqs[0].Workspace())
	require.Equal(t, apiKey, reqs[0].HeaderValue("x-api-key"))
	require.True(t, reqs[1].LastIsToolResult())
	// The private HOME under the state directory took the CLI's session files.
	require.DirExists(t, filepath.Join(c.req.StateDir, "home", ".claude"))
}

func TestCodexReal_WritesFileAndCompletesWithUsage(t *testing.T) {
	c := codexSetup(t)
	c.srv.Script(modelserver.WriteFile("hello.txt", "hello from codex\n", perTurn))
	r := c.launch(t, nil)

	require.Empty(t, r.errs, "stderr: %s", r.stderr)
	require.Equal(t, agent.StatusCompleted, r.result.Status, "stderr: %s", r.stderr)
	body, err := os.ReadFile(filepath.Join(c.wt, "hello.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello from codex\n", string(body))
	require.Equal(t, "done", r.result.Summary)
	require.Equal(t, []string{filepath.Join(c.wt, "hello.txt")}, r.result.Artifacts)
	require.Equal(t, &agent.Usage{InputTokens: 200, OutputTokens: 40}, r.result.Usage, "Codex reports no cost")
	require.Equal(t, 0, r.exit.Code)

	reqs := c.srv.ModelRequests(modelserver.OpenAI)
	require.Len(t, reqs, 2)
	require.Contains(t, reqs[0].ToolNames(), "apply_patch")
	require.Equal(t, c.wt, reqs[0].Workspace())
	require.Equal(t, "gpt-5.5", reqs[0].Model())
	require.Equal(t, "Bearer "+apiKey, reqs[0].HeaderValue("Authorization"))
	require.True(t, reqs[1].LastIsToolResult())
}

// The API failures: with max_retries 0 each is one model request and ends in about a second.
func TestClaudeCodeReal_APIFailuresClassified(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		kind   string
	}{
		{"401 is auth", 401, agent.KindAuth},
		{"500 is model", 500, agent.KindModel},
		{"529 is model", 529, agent.KindModel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := claudeSetup(t)
			c.srv.Script(modelserver.Always(modelserver.Fail(tc.status)))
			r := c.launch(t, nil)

			require.Empty(t, r.errs, "stderr: %s", r.stderr)
			require.Equal(t, agent.StatusFailed, r.result.Status, "stderr: %s", r.stderr)
			require.NotNil(t, r.result.Failure)
			require.Equal(t, tc.kind, r.result.Failure.Kind, r.result.Summary)
			require.Contains(t, r.result.Summary, fmt.Sprintf("HTTP %d", tc.status))
			require.Equal(t, agent.EnvironmentKind(tc.kind), agent.EnvironmentKind(r.result.Failure.Kind))
			require.Len(t, c.srv.ModelRequests(modelserver.Anthropic), 1, "max_retries 0 means one request")
			require.Equal(t, 1, r.exit.Code)
			require.NoFileExists(t, filepath.Join(c.wt, "hello.txt"))
		})
	}
}

func TestCodexReal_APIFailuresClassified(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		kind   string
	}{
		{"401 is auth", 401, agent.KindAuth},
		{"500 is model", 500, agent.KindModel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := codexSetup(t)
			c.srv.Script(modelserver.Always(modelserver.Fail(tc.status)))
			r := c.launch(t, nil)

			require.Empty(t, r.errs, "stderr: %s", r.stderr)
			require.Equal(t, agent.StatusFailed, r.result.Status, "stderr: %s", r.stderr)
			require.NotNil(t, r.result.Failure)
			require.Equal(t, tc.kind, r.result.Failure.Kind, r.result.Summary)
			require.Len(t, c.srv.ModelRequests(modelserver.OpenAI), 1, "max_retries 0 means one request")
			require.Equal(t, 1, r.exit.Code)
		})
	}
}

// A profile's max_retries reaches the CLI: with one retry allowed, a 500 followed by good
// answers completes, and the retry shows in the log.
func TestClaudeCodeReal_RetriesWithinItsBudget(t *testing.T) {
	c := claudeSetup(t)
	one := 1
	c.profile.MaxRetries = &one
	c.srv.Script(failFirst(modelserver.WriteFile("hello.txt", "hi\n", perTurn)))
	r := c.launch(t, nil)

	require.Equal(t, agent.StatusCompleted, r.result.Status, "stderr: %s", r.stderr)
	require.Len(t, c.srv.ModelRequests(modelserver.Anthropic), 3)
	require.True(t, hasLog(r.msgs, "warn", "model API error (HTTP 500, server_error); retry 1 of 1"), "%+v", r.msgs)
	require.FileExists(t, filepath.Join(c.wt, "hello.txt"))
}

func TestCodexReal_RetriesWithinItsBudget(t *testing.T) {
	c := codexSetup(t)
	one := 1
	c.profile.MaxRetries = &one
	c.srv.Script(failFirst(modelserver.WriteFile("hello.txt", "hi\n", perTurn)))
	r := c.launch(t, nil)

	require.Equal(t, agent.StatusCompleted, r.result.Status, "stderr: %s", r.stderr)
	// Codex retries a failed request silently (no "error" event in --json): the third
	// request proves the retry happened.
	require.Len(t, c.srv.ModelRequests(modelserver.OpenAI), 3)
	require.FileExists(t, filepath.Join(c.wt, "hello.txt"))
}

// failFirst answers the first model request with HTTP 500, then as next does.
func failFirst(next modelserver.Script) modelserver.Script {
	var mu sync.Mutex
	failed := false
	return func(r *modelserver.Request) modelserver.Turn {
		mu.Lock()
		first := !failed
		failed = true
		mu.Unlock()
		if first {
			return modelserver.Fail(500)
		}
		return next(r)
	}
}

// Stopping the CLI mid-request with SIGINT: no result line, or (depending on timing) a result
// with terminal_reason "aborted_streaming", and Claude Code exits 0 — so the attempt is
// cancelled when the scheduler stopped it and failed otherwise. The model never answers (its
// reply is held back for an hour), so only the SIGINT can end the run before the harness's
// watchdog SIGKILLs it at the test's deadline: no bound on the run's time is needed (at load
// 50 the CLI took over a minute to start).
func TestClaudeCodeReal_StoppedMidRequestHasNoResult(t *testing.T) {
	c := claudeSetup(t)
	c.srv.Script(modelserver.Always(modelserver.Turn{Text: "late", Delay: time.Hour}))
	r := c.launch(t, stopWhenRequested(t, c.srv))

	require.NotEqual(t, "SIGKILL", r.exit.Signal, "the SIGINT ended the run, not the watchdog")
	require.Equal(t, 0, r.exit.Code, "Claude Code exits 0 on SIGINT (agent-clis.md §2)")
	require.Equal(t, agent.StatusCancelled, r.result.Status, r.result.Summary)
	require.Contains(t, r.result.Summary, "exit status 0")

	dec := c.adapter.NewDecoder() // the same stream, but nobody asked it to stop
	for _, line := range r.lines {
		_, _ = dec.Line(line)
	}
	res := dec.End(agent.ExitStatus{Known: true, Code: 0})
	require.Equal(t, agent.StatusFailed, res.Status)
	require.Equal(t, agent.KindCrash, res.Failure.Kind)
	require.Contains(t, res.Summary, "exit status 0")
}

func TestCodexReal_StoppedMidRequestHasNoResult(t *testing.T) {
	c := codexSetup(t)
	c.srv.Script(modelserver.Always(modelserver.Turn{Text: "late", Delay: time.Hour}))
	r := c.launch(t, stopWhenRequested(t, c.srv))

	require.NotEqual(t, "SIGKILL", r.exit.Signal, "the SIGINT ended the run, not the watchdog")
	require.Equal(t, agent.StatusCancelled, r.result.Status, r.result.Summary)
	require.NotEqual(t, []string{}, r.lines)
}

// stopWhenRequested asks launch to stop the agent (reason "cancelled") once its first model
// request is in flight.
func stopWhenRequested(t *testing.T, srv *modelserver.Server) func([]byte) string {
	return func([]byte) string {
		testenv.WaitFor(t, "the CLI's first model request", func() bool { return len(srv.Requests()) > 0 })
		return "cancelled"
	}
}

func hasLog(msgs []agent.Message, level, text string) bool {
	for _, m := range msgs {
		if m.Type == agent.TypeLog && m.Level == level && strings.Contains(m.Message, text) {
			return true
		}
	}
	return false
}

// allowed_tools reaches the CLI: under acceptEdits a Bash command outside Claude Code's own
// auto-approved set (read-only commands and edits inside the working directory pass without
// it; `sh -c` does not) runs only when Bash is listed; denied, the run fails with kind
// permission (issue 15).
func TestClaudeCodeReal_AllowedToolsDecideBash(t *testing.T) {
	bash := modelserver.ToolThen(
		modelserver.Turn{Calls: []modelserver.Call{{Name: "Bash", Input: map[string]any{"command": "sh -c 'echo from-sh'", "description": "echo"}}}, Usage: perTurn},
		modelserver.Text("done", perTurn))
	for _, allowed := range []bool{true, false} {
		t.Run(fmt.Sprintf("allowed=%v", allowed), func(t *testing.T) {
			c := claudeSetup(t)
			if allowed {
				c.profile.AllowedTools = []string{"Bash"}
			}
			c.srv.Script(bash)
			r := c.launch(t, nil)

			if allowed {
				require.Equal(t, agent.StatusCompleted, r.result.Status, "stderr: %s", r.stderr)
			} else { // a denied call fails the run: kind permission, an escalation, no retry
				require.Equal(t, agent.StatusFailed, r.result.Status, "stderr: %s", r.stderr)
				require.Equal(t, agent.KindPermission, r.result.Failure.Kind)
			}
			reqs := c.srv.ModelRequests(modelserver.Anthropic)
			require.Len(t, reqs, 2)
			results := reqs[1].ToolResults()
			require.Len(t, results, 1)
			if allowed {
				require.Equal(t, "from-sh", strings.TrimSpace(results[0]))
				require.True(t, hasLog(r.msgs, "info", "tool result (ok): from-sh"), "%+v", r.msgs)
			} else {
				require.Equal(t, "This command requires approval", results[0])
				require.True(t, hasLog(r.msgs, "warn", "tool result (error)"), "%+v", r.msgs)
			}
		})
	}
}

// Codex's shell tool runs inside the workspace-write sandbox and may write the worktree.
func TestCodexReal_ShellToolWritesInWorkspace(t *testing.T) {
	c := codexSetup(t)
	c.srv.Script(modelserver.WriteFileShell("shell.txt", "from exec_command", perTurn))
	r := c.launch(t, nil)

	require.Equal(t, agent.StatusCompleted, r.result.Status, "stderr: %s", r.stderr)
	body, err := os.ReadFile(filepath.Join(c.wt, "shell.txt"))
	require.NoError(t, err)
	require.Equal(t, "from exec_command", string(body))
	require.True(t, hasLog(r.msgs, "info", "→ completed (exit 0)"), "%+v", r.msgs)
	require.Equal(t, &agent.Usage{InputTokens: 200, OutputTokens: 40}, r.result.Usage)
}

// Both real CLIs take the mission's model as one --model=<name> argument and send it to the
// model API verbatim.
func TestClaudeCodeReal_ModelAsOneEqualsArgument(t *testing.T) {
	c := claudeSetup(t)
	c.req.Start.Model = "claude-scripted-4-5@20250929"
	c.srv.Script(modelserver.Always(modelserver.Text("done", perTurn)))
	inv, err := c.adapter.Invocation(c.profile, c.req)
	require.NoError(t, err)
	require.Contains(t, inv.Argv, "--model=claude-scripted-4-5@20250929")
	r := launch(t, c.adapter, inv, nil)

	require.Equal(t, agent.StatusCompleted, r.result.Status, "stderr: %s", r.stderr)
	reqs := c.srv.ModelRequests(modelserver.Anthropic)
	require.NotEmpty(t, reqs)
	for _, q := range reqs {
		require.Equal(t, "claude-scripted-4-5@20250929", q.Model())
	}
}

func TestCodexReal_ModelAsOneEqualsArgument(t *testing.T) {
	c := codexSetup(t)
	c.req.Start.Model = "gpt-5.5-mini"
	c.srv.Script(modelserver.Always(modelserver.Text("done", perTurn)))
	inv, err := c.adapter.Invocation(c.profile, c.req)
	require.NoError(t, err)
	require.Contains(t, inv.Argv, "--model=gpt-5.5-mini")
	r := launch(t, c.adapter, inv, nil)

	require.Equal(t, agent.StatusCompleted, r.result.Status, "stderr: %s", r.stderr)
	reqs := c.srv.ModelRequests(modelserver.OpenAI)
	require.NotEmpty(t, reqs)
	require.Equal(t, "gpt-5.5-mini", reqs[0].Model(), "the command line's model beats config.toml's gpt-5.5")
}
