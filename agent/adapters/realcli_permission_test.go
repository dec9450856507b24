package adapters_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
)

// The real Claude Code under permission mode acceptEdits is asked for `git push` through
// Bash: it denies the call (system/permission_denied, then permission_denials in a result
// that says success, exit 0); the adapter ends the run failed with kind permission, naming
// the command, the mode and the profile key that would allow it.
func TestClaudeCodeReal_DeniedBashFailsWithPermission(t *testing.T) {
	c := claudeSetup(t)
	c.profile.PermissionMode = "acceptEdits"
	push := modelserver.Call{Name: "Bash", Input: map[string]any{"command": "git push origin main", "description": "push"}}
	c.srv.Script(modelserver.ToolThen(modelserver.Turn{Text: "Pushing.", Calls: []modelserver.Call{push}, Usage: perTurn},
		modelserver.Text("done", perTurn)))
	r := c.launch(t, nil)

	require.Empty(t, r.errs, "stderr: %s", r.stderr)
	require.Equal(t, 0, r.exit.Code, "Claude Code exits 0 after a denial")
	require.Equal(t, agent.StatusFailed, r.result.Status)
	require.Equal(t, agent.KindPermission, r.result.Failure.Kind)
	require.Equal(t, "Bash", r.result.Failure.Tool)
	require.Equal(t, `claude-code was refused 1 tool call(s) under permission mode acceptEdits: Bash: git push origin main; `+
		`to allow them, add "Bash" to the profile's allowed_tools (Claude Code --allowedTools) or choose a permission_mode that permits them`,
		r.result.Summary)
	require.Contains(t, r.result.Failure.Diagnostic, "This command requires approval")
	require.NotNil(t, r.result.Usage, "usage survives the failure")
	require.Equal(t, int64(200), r.result.Usage.InputTokens)
}

// What the real Codex 0.171 does when its sandbox refuses a command (read-only sandbox, a
// shell write that fails with "Read-only file system"): the model always sees the refusal,
// but whether --json shows the command at all varies from run to run (measured here: about
// one run in four prints its command_execution items; agent-clis.md §4 saw none). Each run
// must be consistent: when the failed item is printed, the run ends failed with kind
// permission naming the command and the profile's sandbox key; when it is not, the adapter
// cannot know and the run completes. Up to six runs are made to see the printed shape.
func TestCodexReal_SandboxRefusalFailsWithPermissionWhenReported(t *testing.T) {
	for run := 1; run <= 6; run++ {
		c := codexSetup(t)
		c.profile.Sandbox = "read-only"
		c.srv.Script(modelserver.WriteFileShell("x.txt", "hi", perTurn))
		r := c.launch(t, nil)

		require.Empty(t, r.errs, "stderr: %s", r.stderr)
		reqs := c.srv.ModelRequests(modelserver.OpenAI)
		require.Len(t, reqs, 2)
		require.Contains(t, strings.Join(reqs[1].ToolResults(), "\n"), "Read-only file system", "the sandbox refused the write")
		reported := false
		for _, l := range r.lines {
			if strings.Contains(string(l), `"item.completed"`) && strings.Contains(string(l), `"command_execution"`) {
				reported = true
				t.Logf("run %d: Codex reported the refused command: %s", run, l)
			}
		}
		if !reported {
			require.Equal(t, agent.StatusCompleted, r.result.Status, "nothing reported, nothing to classify")
			t.Logf("run %d: Codex printed no item for the refused command", run)
			continue
		}
		require.Equal(t, agent.StatusFailed, r.result.Status)
		require.Equal(t, agent.KindPermission, r.result.Failure.Kind)
		require.Contains(t, r.result.Failure.Tool, "x.txt")
		require.Contains(t, r.result.Summary, "codex's sandbox refused 1 command(s)")
		require.Contains(t, r.result.Summary, "the profile's sandbox (Codex sandbox_mode)")
		require.Contains(t, r.result.Failure.Diagnostic, "Read-only file system")
		return
	}
	t.Log("Codex printed no item for the refused command in six runs: only the hand-written shapes were checked")
}
