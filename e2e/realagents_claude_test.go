package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The real Claude Code CLI (2.1.332) as a managed agent of the scheduler loop: launched
// through the runner and the shim of the built binary, in a worktree of its own, against the
// scripted model server, with its own retries off (max_retries 0).

func oneMission(title, file string) engine.VoyageSpec {
	return engine.VoyageSpec{Title: title, Missions: []engine.MissionSpec{{Key: "m", Title: title,
		Brief: "Create " + file + " at the top of the repository.", WriteArea: []string{file}}}}
}

// TestRealClaude_WritesFileMissionLandsWithUsageAndCost: Claude Code writes a file in its
// worktree with its own Write tool; the mission completes and lands (the scheduler commits
// what the agent left uncommitted), and the attempt, the mission and the voyage record the
// tokens and the cost Claude Code computed.
func TestRealClaude_WritesFileMissionLandsWithUsageAndCost(t *testing.T) {
	srv := modelserver.Start(t)
	srv.Script(modelserver.WriteFile("hello.txt", "hello from claude\n", perTurn))
	h := newLoopHarness(t, []agent.Profile{claudeProfile(t, srv)}, "ANTHROPIC_API_KEY="+apiKey)
	start := time.Now()
	d := h.dispatch(oneMission("say hello", "hello.txt"))
	id := d.IDs["m"]
	h.until("the voyage settles", func() bool { return h.settled(d.Voyage.ID) })
	wall := time.Since(start)

	v := h.voyage(d.Voyage.ID)
	require.Equal(t, domain.VoyageCompleted, v.Voyage.State, dumpMissions(h.ctx, h.eng))
	m := h.mission(id)
	require.Equal(t, domain.StateCompleted, m.Mission.State)
	require.Equal(t, domain.LandingLanded, m.Mission.Landing)
	require.Len(t, m.Attempts, 1)
	require.Equal(t, "done", m.Attempts[0].Summary)
	body, ok := showFile(t, h.repo, "main", "hello.txt")
	require.True(t, ok, "hello.txt landed on main")
	require.Equal(t, "hello from claude\n", body)

	// Usage: two model turns of 100 in / 20 out; Claude Code prices them itself.
	for what, u := range map[string]domain.Usage{"attempt": m.Attempts[0].Usage, "mission": m.Mission.Usage, "voyage": v.Voyage.Usage} {
		require.Equal(t, int64(200), u.InputTokens, what)
		require.Equal(t, int64(40), u.OutputTokens, what)
		require.Greater(t, u.CostUSD, 0.0, what)
	}

	// The agent ran in the mission's worktree, with the key and nothing of ours.
	reqs := srv.ModelRequests(modelserver.Anthropic)
	require.Len(t, reqs, 2)
	require.Len(t, m.Workspaces, 1)
	ws := m.Workspaces[0]
	require.Equal(t, ws.Path, reqs[0].Workspace())
	require.True(t, strings.HasPrefix(ws.Path, h.data), "the worktree is under the data dir: %s", ws.Path)
	require.Equal(t, apiKey, reqs[0].HeaderValue("x-api-key"))
	// Claude Code's session files went to the profile's private HOME under the data dir.
	require.DirExists(t, filepath.Join(h.data, "profiles", "claude", "home", ".claude"))
	// The landed commit is the scheduler's (Claude Code did not commit) on top of main.
	require.Equal(t, "hello.txt", gitRun(t, h.repo, "diff-tree", "--no-commit-id", "--name-only", "-r", "main"))
	logTimings(t, "claude one mission", wall, collectTimings(t, h.ctx, h.eng, h.data, d.Voyage.ID))
}

// TestRealClaude_401BlocksWithEnvironmentEscalation: the model API refuses the key; the
// attempt fails as an authentication failure, the mission blocks with an escalation of kind
// environment for the Main Agent, no retry is burned and the model saw one request.
func TestRealClaude_401BlocksWithEnvironmentEscalation(t *testing.T) {
	srv := modelserver.Start(t)
	srv.Script(modelserver.Always(modelserver.Fail(401)))
	h := newLoopHarness(t, []agent.Profile{claudeProfile(t, srv)}, "ANTHROPIC_API_KEY="+apiKey)
	d := h.dispatch(oneMission("say hello", "hello.txt"))
	id := d.IDs["m"]
	h.until("the voyage settles", func() bool { return h.settled(d.Voyage.ID) })
	checkAuthBlocked(t, h, d, id)
	require.Len(t, srv.ModelRequests(modelserver.Anthropic), 1, "max_retries 0 and no scheduler retry: one request")
}

// checkAuthBlocked asserts the outcome of an authentication failure.
func checkAuthBlocked(t *testing.T, h *loopHarness, d engine.Dispatched, id string) {
	t.Helper()
	v := h.voyage(d.Voyage.ID)
	require.Equal(t, domain.VoyageBlocked, v.Voyage.State, dumpMissions(h.ctx, h.eng))
	m := h.mission(id)
	require.Equal(t, domain.StateBlocked, m.Mission.State)
	require.Len(t, m.Attempts, 1, "an environment failure is not retried")
	require.Equal(t, domain.OutcomeFailed, m.Attempts[0].Outcome, "the attempt failed; the decision blocks the mission")
	require.NotNil(t, m.Attempts[0].Failure)
	require.Equal(t, agent.KindAuth, m.Attempts[0].Failure.Kind)
	require.Equal(t, 0, m.Mission.AttemptsUsed, "no retry burned")
	require.Equal(t, domain.DecisionBlock, m.Mission.Decision.Kind)
	require.NotNil(t, m.Escalation)
	require.Equal(t, "environment", m.Escalation.Kind)
	require.Equal(t, domain.RouteMainAgent, m.Escalation.Route)
	require.Equal(t, []string{id}, m.Escalation.MissionIDs)
	require.Contains(t, m.Escalation.Reason, "auth")
	for _, e := range m.Escalation.Evidence {
		require.NotContains(t, e, apiKey, "the key never reaches an escalation")
	}
	_, landed := showFile(t, h.repo, "main", "hello.txt")
	require.False(t, landed)
}

// TestRealClaude_500IsRetriedWithinBudget: the first model request gets HTTP 500 (the CLI's
// own retries are off, so the attempt fails with kind model); the scheduler retries within
// the mission's budget and the second attempt writes the file, which lands.
func TestRealClaude_500IsRetriedWithinBudget(t *testing.T) {
	srv := modelserver.Start(t)
	srv.Script(failFirst(500, modelserver.WriteFile("hello.txt", "second time lucky\n", perTurn)))
	h := newLoopHarness(t, []agent.Profile{claudeProfile(t, srv)}, "ANTHROPIC_API_KEY="+apiKey)
	d := h.dispatch(oneMission("say hello", "hello.txt"))
	id := d.IDs["m"]
	h.until("the voyage settles", func() bool { return h.settled(d.Voyage.ID) })
	checkRetriedOnce(t, h, d, id, "second time lucky\n")
	require.Len(t, srv.ModelRequests(modelserver.Anthropic), 3, "one failed request, then two turns")
}

// checkRetriedOnce asserts a mission that failed once with a model error, then landed.
func checkRetriedOnce(t *testing.T, h *loopHarness, d engine.Dispatched, id, content string) {
	t.Helper()
	require.Equal(t, domain.VoyageCompleted, h.voyage(d.Voyage.ID).Voyage.State, dumpMissions(h.ctx, h.eng))
	m := h.mission(id)
	require.Equal(t, domain.StateCompleted, m.Mission.State)
	require.Equal(t, domain.LandingLanded, m.Mission.Landing)
	require.Len(t, m.Attempts, 2)
	require.Equal(t, domain.OutcomeFailed, m.Attempts[0].Outcome)
	require.Equal(t, agent.KindModel, m.Attempts[0].Failure.Kind)
	require.Equal(t, domain.OutcomeCompleted, m.Attempts[1].Outcome)
	require.Equal(t, 1, m.Mission.AttemptsUsed, "one retry of the budget used")
	body, ok := showFile(t, h.repo, "main", "hello.txt")
	require.True(t, ok)
	require.Equal(t, content, body)
	// The second attempt ran in a fresh worktree of its own.
	require.Len(t, m.Workspaces, 2)
	require.Equal(t, "a2", filepath.Base(m.Workspaces[1].Path))
}
