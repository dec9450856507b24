package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// TestMainAgent_ClaudeDispatchesVoyageToCodexAgents (issue 7, e2e 2): the same voyage, with
// real Codex processes as the managed agents (workspace-write sandbox: they cannot commit,
// the scheduler commits for them). The OpenAI key reaches the server through the Main
// Agent's environment and the children through the profile's secret_env.
func TestMainAgent_ClaudeDispatchesVoyageToCodexAgents(t *testing.T) {
	srv := modelserver.Start(t)
	r := runMainAgent(t, srv, codexProfile(t, srv), "OPENAI_API_KEY="+apiKey)
	r.checkMainAgent()
	r.checkStdoutJSONRPC(2)

	eng, closeDB := r.openEngine()
	defer closeDB()
	v, ms := r.checkVoyageLanded(eng)
	for _, d := range ms {
		require.Len(t, d.Attempts, 1, d.Mission.Key)
		require.Equal(t, "codex", d.Attempts[0].Profile)
		require.Equal(t, domain.Usage{InputTokens: 300, OutputTokens: 60}, d.Mission.Usage, "three turns; Codex reports no cost: %s", d.Mission.Key)
		require.Equal(t, "Created the file the brief asked for.", d.Attempts[0].Summary)
	}
	require.Equal(t, domain.Usage{InputTokens: 1200, OutputTokens: 240}, v.Voyage.Usage)

	children := r.childRequests(modelserver.OpenAI)
	require.Len(t, children, len(voyageFiles))
	for ws, reqs := range children {
		require.True(t, strings.HasPrefix(ws, r.data+"/worktrees/"), ws)
		require.Len(t, reqs, 3, ws)
		require.Contains(t, reqs[1].ToolResults()[0], "# Mission msn_", "the brief as Codex's shell printed it")
		require.Equal(t, "Bearer "+apiKey, reqs[0].HeaderValue("Authorization"))
		require.Equal(t, "gpt-5.5", reqs[0].Model())
	}
	require.Empty(t, r.childRequests(modelserver.Anthropic), "only the Main Agent spoke Anthropic")
	logTimings(t, "Claude Code Main Agent, 4 Codex children", voyageWall(v.Voyage),
		collectTimings(t, context.Background(), eng, r.data, v.Voyage.ID), ", Main Agent session "+ms2(r.wall))
}
