package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// TestRealClaude_DeniedToolBlocksWithPermissionEscalation: the scripted model asks the real
// Claude Code for `git push` through Bash, which the profile's permission mode (acceptEdits,
// no allowed_tools) denies. Claude Code reports success; the attempt fails with kind
// permission, the mission blocks with an escalation for a person that names the refused
// command, the profile and the key that would allow it, and no retry is spent.
func TestRealClaude_DeniedToolBlocksWithPermissionEscalation(t *testing.T) {
	srv := modelserver.Start(t)
	push := modelserver.Call{Name: "Bash", Input: map[string]any{"command": "git push origin main", "description": "push"}}
	srv.Script(modelserver.ToolThen(modelserver.Turn{Text: "Pushing.", Calls: []modelserver.Call{push}, Usage: perTurn},
		modelserver.Text("done", perTurn)))
	p := claudeProfile(t, srv)
	p.PermissionMode = "acceptEdits"
	h := newLoopHarness(t, []agent.Profile{p}, "ANTHROPIC_API_KEY="+apiKey)
	d := h.dispatch(oneMission("push the branch", "hello.txt"))
	id := d.IDs["m"]
	h.until("the voyage settles", func() bool { return h.settled(d.Voyage.ID) })

	m := h.mission(id)
	require.Equal(t, domain.StateBlocked, m.Mission.State, dumpMissions(h.ctx, h.eng))
	require.Len(t, m.Attempts, 1, "a permission failure is not retried")
	f := m.Attempts[0].Failure
	require.NotNil(t, f)
	require.Equal(t, agent.KindPermission, f.Kind)
	require.Equal(t, "Bash", f.Tool)
	require.Equal(t, 0, m.Mission.AttemptsUsed, "the retry budget is untouched")
	require.Equal(t, domain.DecisionBlock, m.Mission.Decision.Kind)
	require.NotNil(t, m.Escalation)
	require.Equal(t, "environment", m.Escalation.Kind)
	require.Equal(t, domain.RoutePerson, m.Escalation.Route, "only a person changes a profile's permissions")
	for _, want := range []string{"permission", "profile claude", "Bash: git push origin main", "permission mode acceptEdits", `"Bash"`, "allowed_tools", "permission_mode"} {
		require.Contains(t, m.Escalation.Reason, want)
	}
	require.True(t, hasEvidence(m.Escalation.Evidence, "diagnostic: Bash: git push origin main: This command requires approval"), "%q", m.Escalation.Evidence)
	require.Len(t, srv.ModelRequests(modelserver.Anthropic), 2, "one attempt: the tool call, then the final turn")
}

func hasEvidence(ev []string, prefix string) bool {
	for _, e := range ev {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}
