package adapters

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// Claude Code refuses bypassPermissions as root unless IS_SANDBOX=1 (agent-clis.md §2): the
// adapter sets it for that case only.
func TestClaudeInvocation_IsSandboxOnlyForBypassAsRoot(t *testing.T) {
	req := agent.LaunchRequest{Start: agent.Start{Workspace: "/w"}, BriefFile: "/w/b.md", StateDir: "/s"}
	for _, tc := range []struct {
		mode string
		euid int
		want bool
	}{
		{"bypassPermissions", 0, true},
		{"bypassPermissions", 1000, false},
		{"acceptEdits", 0, false},
		{"", 0, false},
	} {
		c := ClaudeCode{euid: func() int { return tc.euid }}
		inv, err := c.Invocation(agent.Profile{Name: "c", Runtime: agent.RuntimeClaudeCode, PermissionMode: tc.mode}, req)
		require.NoError(t, err)
		v, ok := inv.Env["IS_SANDBOX"]
		require.Equal(t, tc.want, ok, "%s as uid %d", tc.mode, tc.euid)
		if tc.want {
			require.Equal(t, "1", v)
		}
	}
}
