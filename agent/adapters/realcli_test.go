package adapters_test

import (
	"os"
	"path/filepath"
	"testing"

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
