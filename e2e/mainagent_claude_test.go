package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
)

// TestMainAgent_ClaudeDispatchesVoyageToClaudeAgents (issue 7, e2e 1): Claude Code as the
// Main Agent dispatches a four-mission voyage over MCP (stdio) and polls voyage_status; the
// scheduler runs four real Claude Code children, each in its own worktree, reading its brief
// and writing its file. The voyage completes, main holds the four files exactly once, every
// mission records tokens and cost, and the server's stdout carried nothing but JSON-RPC.
func TestMainAgent_ClaudeDispatchesVoyageToClaudeAgents(t *testing.T) {
	srv := modelserver.Start(t)
	r := runMainAgent(t, srv, claudeProfile(t, srv))
	r.checkMainAgent()
	r.checkStdoutJSONRPC(2)

	eng, closeDB := r.openEngine()
	defer closeDB()
	v, ms := r.checkVoyageLanded(eng)
	for _, d := range ms {
		require.Len(t, d.Attempts, 1, d.Mission.Key)
		require.Equal(t, int64(300), d.Mission.Usage.InputTokens, "three turns of 100: %s", d.Mission.Key)
		require.Equal(t, int64(60), d.Mission.Usage.OutputTokens, d.Mission.Key)
		require.Greater(t, d.Mission.Usage.CostUSD, 0.0, d.Mission.Key)
		require.Equal(t, "Created the file the brief asked for.", d.Attempts[0].Summary)
	}
	require.Equal(t, int64(1200), v.Voyage.Usage.InputTokens)
	require.Equal(t, int64(240), v.Voyage.Usage.OutputTokens)
	require.Greater(t, v.Voyage.Usage.CostUSD, 0.0)

	// Four children, each in a worktree under the data dir, three model turns each; each read
	// the brief through its Read tool and was told about its file there.
	children := r.childRequests(modelserver.Anthropic)
	require.Len(t, children, len(voyageFiles))
	for ws, reqs := range children {
		require.True(t, strings.HasPrefix(ws, r.data+"/worktrees/"), ws)
		require.Len(t, reqs, 3, ws)
		require.Contains(t, reqs[1].ToolResults()[0], "# Mission msn_", "the brief file as Claude Code read it")
		require.Equal(t, apiKey, reqs[0].HeaderValue("x-api-key"))
	}
	logTimings(t, "Claude Code Main Agent, 4 Claude Code children", voyageWall(v.Voyage),
		collectTimings(t, context.Background(), eng, r.data, v.Voyage.ID), ", Main Agent session "+ms2(r.wall))
}
