package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The real Codex CLI (0.171.0) as a managed agent of the scheduler loop, in the default
// workspace-write sandbox, where the worktree's .git is read-only: the agent cannot commit,
// so the scheduler commits what it leaves.

// patchThenCommit scripts Codex: add rel with apply_patch, then try to commit it through the
// shell (the sandbox refuses: .git is read-only), then say done.
func patchThenCommit(rel, content string) modelserver.Script {
	return func(r *modelserver.Request) modelserver.Turn {
		switch len(r.ToolResults()) {
		case 0:
			return modelserver.Turn{Text: "Adding " + rel + ".", Usage: perTurn,
				Calls: []modelserver.Call{{Name: "apply_patch", Freeform: modelserver.AddFilePatch(rel, content)}}}
		case 1:
			return modelserver.Turn{Text: "Committing.", Usage: perTurn, Calls: []modelserver.Call{{Name: "exec_command",
				Input: map[string]any{"cmd": "git add -A && git commit -q -m 'add " + rel + "'"}}}}
		default:
			return modelserver.Text("done", perTurn)
		}
	}
}

// TestRealCodex_WritesFileSchedulerCommitsAndLands: Codex adds a file with apply_patch; its
// own `git commit` is refused by the sandbox; the mission completes, the scheduler commits
// the file and lands it; the tokens are recorded (Codex reports no cost).
func TestRealCodex_WritesFileSchedulerCommitsAndLands(t *testing.T) {
	srv := modelserver.Start(t)
	srv.Script(patchThenCommit("hello.txt", "hello from codex\n"))
	h := newLoopHarness(t, []agent.Profile{codexProfile(t, srv)}, "OPENAI_API_KEY="+apiKey)
	start := time.Now()
	d := h.dispatch(oneMission("say hello", "hello.txt"))
	id := d.IDs["m"]
	h.until("the voyage settles", func() bool { return h.settled(d.Voyage.ID) })
	wall := time.Since(start)

	require.Equal(t, domain.VoyageCompleted, h.voyage(d.Voyage.ID).Voyage.State, dumpMissions(h.ctx, h.eng))
	m := h.mission(id)
	require.Equal(t, domain.StateCompleted, m.Mission.State)
	require.Equal(t, domain.LandingLanded, m.Mission.Landing)
	require.Len(t, m.Attempts, 1)
	body, ok := showFile(t, h.repo, "main", "hello.txt")
	require.True(t, ok, "hello.txt landed on main")
	require.Equal(t, "hello from codex\n", body)
	require.Equal(t, domain.Usage{InputTokens: 300, OutputTokens: 60}, m.Mission.Usage, "three turns; Codex reports no cost")
	require.Equal(t, m.Mission.Usage, m.Attempts[0].Usage)

	reqs := srv.ModelRequests(modelserver.OpenAI)
	require.Len(t, reqs, 3)
	require.Equal(t, "Bearer "+apiKey, reqs[0].HeaderValue("Authorization"))
	require.Equal(t, "gpt-5.5", reqs[0].Model())
	// The agent's own commit failed inside the sandbox...
	results := reqs[2].ToolResults()
	require.Len(t, results, 2)
	require.Contains(t, results[1], "Process exited with code 128", "git commit inside the sandbox fails")
	require.Regexp(t, `(?i)index\.lock.*(read-only file system|permission denied|operation not permitted)`, results[1])
	// ...so the commit that landed (a fast-forward: main had not moved) is the scheduler's.
	commits := gitRun(t, h.repo, "log", "--format=%an|%ae|%s", "main~1..main")
	require.Equal(t, "mcp-scheduler|mcp-scheduler@localhost|say hello", commits)
	require.Contains(t, gitRun(t, h.repo, "log", "-1", "--format=%B", "main"), "Mission-Id: "+id)
	require.Equal(t, "hello.txt", gitRun(t, h.repo, "diff-tree", "--no-commit-id", "--name-only", "-r", "main"))
	// The profile's private CODEX_HOME: the scheduler wrote its provider (our model server)
	// and the retry settings there.
	conf, err := os.ReadFile(filepath.Join(h.data, "profiles", "codex", "codex-home", "config.toml"))
	require.NoError(t, err)
	require.Contains(t, string(conf), `base_url = "`+srv.OpenAIBaseURL()+`"`)
	require.Contains(t, string(conf), "request_max_retries = 0")
	require.Contains(t, string(conf), `sandbox_mode = "workspace-write"`)
	logTimings(t, "codex one mission", wall, collectTimings(t, h.ctx, h.eng, h.data, d.Voyage.ID))
}

// TestRealCodex_401BlocksWithEnvironmentEscalation: Codex's 401 (a turn.failed naming the
// status) blocks the mission with an environment escalation; no retry is burned.
func TestRealCodex_401BlocksWithEnvironmentEscalation(t *testing.T) {
	srv := modelserver.Start(t)
	srv.Script(modelserver.Always(modelserver.Fail(401)))
	h := newLoopHarness(t, []agent.Profile{codexProfile(t, srv)}, "OPENAI_API_KEY="+apiKey)
	d := h.dispatch(oneMission("say hello", "hello.txt"))
	h.until("the voyage settles", func() bool { return h.settled(d.Voyage.ID) })
	checkAuthBlocked(t, h, d, d.IDs["m"])
	require.Len(t, srv.ModelRequests(modelserver.OpenAI), 1, "retries 0 and no scheduler retry: one request")
}

// TestRealCodex_500IsRetriedWithinBudget: a 500 on the first request fails attempt 1 (kind
// model); the scheduler's retry writes the file and it lands.
func TestRealCodex_500IsRetriedWithinBudget(t *testing.T) {
	srv := modelserver.Start(t)
	srv.Script(failFirst(500, modelserver.WriteFile("hello.txt", "second time lucky\n", perTurn)))
	h := newLoopHarness(t, []agent.Profile{codexProfile(t, srv)}, "OPENAI_API_KEY="+apiKey)
	d := h.dispatch(oneMission("say hello", "hello.txt"))
	h.until("the voyage settles", func() bool { return h.settled(d.Voyage.ID) })
	checkRetriedOnce(t, h, d, d.IDs["m"], "second time lucky\n")
	require.Len(t, srv.ModelRequests(modelserver.OpenAI), 3, "one failed request, then two turns")
}
