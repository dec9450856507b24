package adapters_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
)

// Claude Code reports one denial twice (system/permission_denied, then the result's
// permission_denials): it is counted once, and a denial the result alone lists still counts.
func TestClaudeDecoder_DenialsCountedOnceFromEitherPlace(t *testing.T) {
	dec := adapters.NewClaudeCode().NewDecoder()
	_, errs := lines(t, dec,
		`{"type":"system","subtype":"init","permissionMode":"dontAsk"}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/w/a.go"}}]}}`,
		`{"type":"system","subtype":"permission_denied","tool_name":"Write","tool_use_id":"t1","message":"denied by dontAsk"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"denied by dontAsk"}]}}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"could not write","permission_denials":[`+
			`{"tool_name":"Write","tool_use_id":"t1","tool_input":{"file_path":"/w/a.go"}},`+
			`{"tool_name":"mcp__sched__claim","tool_use_id":"t2","tool_input":{}}]}`)
	require.Empty(t, errs)
	res := dec.End(agent.ExitStatus{Known: true})
	require.Equal(t, agent.StatusFailed, res.Status)
	require.Equal(t, agent.KindPermission, res.Failure.Kind)
	require.Equal(t, "Write", res.Failure.Tool)
	require.Equal(t, `claude-code was refused 2 tool call(s) under permission mode dontAsk: Write /w/a.go, mcp__sched__claim; `+
		`to allow them, add "Write", "mcp__sched__claim" (or "mcp__sched" for every tool of that MCP server) to the profile's `+
		`allowed_tools (Claude Code --allowedTools) or choose a permission_mode that permits them`, res.Summary)
	require.Equal(t, "Write /w/a.go: denied by dontAsk\nclaude-code's last message: could not write", res.Failure.Diagnostic)
	require.Empty(t, res.Artifacts)
}

// A run that ends without a result after a denial fails with kind permission; one the
// scheduler stopped (cancelled) or that ran out of time keeps that outcome; an API failure
// keeps its own kind.
func TestClaudeDecoder_DenialWithoutResult(t *testing.T) {
	denied := []string{
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"rm -rf build"}}]}}`,
		`{"type":"system","subtype":"permission_denied","tool_name":"Bash","tool_use_id":"t1","message":"This command requires approval"}`,
	}
	for _, tc := range []struct {
		name   string
		exit   agent.ExitStatus
		status string
		kind   string
	}{
		{"crashed", agent.ExitStatus{Known: true, Code: 1}, agent.StatusFailed, agent.KindPermission},
		{"cancelled", agent.ExitStatus{Known: true, Code: 143, Reason: "cancelled"}, agent.StatusCancelled, ""},
		{"stalled", agent.ExitStatus{Known: true, Code: 143, Reason: "stalled"}, agent.StatusFailed, agent.KindTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := adapters.NewClaudeCode().NewDecoder()
			_, errs := lines(t, dec, denied...)
			require.Empty(t, errs)
			res := dec.End(tc.exit)
			require.Equal(t, tc.status, res.Status)
			if tc.kind == "" {
				require.Nil(t, res.Failure)
				return
			}
			require.Equal(t, tc.kind, res.Failure.Kind)
			if tc.kind == agent.KindPermission {
				require.Contains(t, res.Summary, "Bash: rm -rf build")
				require.Contains(t, res.Summary, "permission mode unknown")
			}
		})
	}
	dec := adapters.NewClaudeCode().NewDecoder()
	_, errs := lines(t, dec, append(denied,
		`{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key","api_error_status":401,"terminal_reason":"api_error"}`)...)
	require.Empty(t, errs)
	require.Equal(t, agent.KindAuth, dec.End(agent.ExitStatus{Known: true, Code: 1}).Failure.Kind)
}

// Codex 0.171 prints nothing for a command its sandbox refuses (the recorded transcripts
// codex-sandbox-denied-git-commit-in-worktree.jsonl and the real-CLI test show it), so these
// are hand-written events of the shapes Codex's exec events document: a command_execution
// item with status "declined", and a failed one whose output is the sandbox's refusal.
func TestCodexDecoder_SandboxRefusalsFailWithPermission(t *testing.T) {
	dec := adapters.Codex{}.NewDecoder()
	msgs, errs := lines(t, dec,
		`{"type":"thread.started","thread_id":"th"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'touch /etc/x'","aggregated_output":"touch: cannot touch '/etc/x': Read-only file system\n","exit_code":1,"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc 'curl example.com'","aggregated_output":"","exit_code":null,"status":"declined"}}`,
		`{"type":"item.completed","item":{"id":"item_3","type":"command_execution","command":"/bin/bash -lc 'go test ./...'","aggregated_output":"FAIL","exit_code":1,"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"I could not commit."}}`,
		`{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}`)
	require.Empty(t, errs)
	require.Equal(t, agent.Message{Type: agent.TypeLog, Level: "warn", Message: "$ /bin/bash -lc 'curl example.com' → declined (no exit code)"}, msgs[3])
	res := dec.End(agent.ExitStatus{Known: true})
	require.Equal(t, agent.StatusFailed, res.Status)
	require.Equal(t, agent.KindPermission, res.Failure.Kind)
	require.Equal(t, "/bin/bash -lc 'touch /etc/x'", res.Failure.Tool)
	require.True(t, strings.HasPrefix(res.Summary, "codex's sandbox refused 2 command(s): /bin/bash -lc 'touch /etc/x'; /bin/bash -lc 'curl example.com'; to allow them, set the profile's sandbox (Codex sandbox_mode)"), res.Summary)
	require.NotContains(t, res.Summary, "go test", "an ordinary failing command is no refusal")
	require.Contains(t, res.Failure.Diagnostic, "Read-only file system")
	require.Contains(t, res.Failure.Diagnostic, "codex's last message: I could not commit.")
	require.Contains(t, res.Failure.Diagnostic, "$ /bin/bash -lc 'curl example.com': declined")
	require.Equal(t, &agent.Usage{InputTokens: 10, OutputTokens: 2}, res.Usage, "usage is kept")

	// A turn without refusals completes as before.
	dec = adapters.Codex{}.NewDecoder()
	_, errs = lines(t, dec,
		`{"type":"item.completed","item":{"id":"item_3","type":"command_execution","command":"go test","aggregated_output":"FAIL","exit_code":1,"status":"failed"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}`)
	require.Empty(t, errs)
	require.Equal(t, agent.StatusCompleted, dec.End(agent.ExitStatus{Known: true}).Status)
}

// A refused commit is no permission failure: the scheduler commits what an agent leaves
// uncommitted, and both CLIs refuse it routinely (Codex keeps .git read-only in
// workspace-write, Claude Code's acceptEdits denies Bash).
func TestDecoders_RefusedCommitIsNoPermissionFailure(t *testing.T) {
	dec := adapters.Codex{}.NewDecoder()
	_, errs := lines(t, dec,
		`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc \"git add hello.txt && git commit -m hello\"","aggregated_output":"fatal: Unable to create '/w/.git/worktrees/m/index.lock': Read-only file system\n","exit_code":128,"status":"failed"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}`)
	require.Empty(t, errs)
	require.Equal(t, agent.StatusCompleted, dec.End(agent.ExitStatus{Known: true}).Status)

	dec = adapters.NewClaudeCode().NewDecoder()
	_, errs = lines(t, dec,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"git add -A && git commit -m done"}}]}}`,
		`{"type":"system","subtype":"permission_denied","tool_name":"Bash","tool_use_id":"t1","message":"This command requires approval"}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"done","permission_denials":[{"tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"git add -A && git commit -m done"}}]}`)
	require.Empty(t, errs)
	require.Equal(t, agent.StatusCompleted, dec.End(agent.ExitStatus{Known: true}).Status)
}

// Found by issue 15's fresh-user trial: a denied Bash command of about 230 characters pushed
// the profile setting that would allow it off the end of the escalation's reason. The summary
// now quotes each refused call up to 100 characters (the diagnostic keeps it whole), so it
// always ends with the setting.
func TestDecoders_LongRefusedCallIsQuotedShortTheSettingStays(t *testing.T) {
	long := "curl -sS -X POST https://deploy.example.com/api/v2/releases/production/trigger" + strings.Repeat(" -H 'X-Reason: nightly'", 12)
	dec := adapters.NewClaudeCode().NewDecoder()
	_, errs := lines(t, dec,
		`{"type":"system","subtype":"init","permissionMode":"acceptEdits"}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"`+long+`"}}]}}`,
		`{"type":"system","subtype":"permission_denied","tool_name":"Bash","tool_use_id":"t1","message":"This command requires approval"}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"could not deploy"}`)
	require.Empty(t, errs)
	res := dec.End(agent.ExitStatus{Known: true})
	require.Equal(t, agent.KindPermission, res.Failure.Kind)
	quoted := []rune("Bash: " + long)[:100]
	require.Equal(t, `claude-code was refused 1 tool call(s) under permission mode acceptEdits: `+string(quoted)+`…; `+
		`to allow them, add "Bash" to the profile's allowed_tools (Claude Code --allowedTools) or choose a permission_mode that permits them`, res.Summary)
	require.Contains(t, res.Failure.Diagnostic, "Bash: "+long+": This command requires approval", "the diagnostic keeps the call whole")

	cdec := adapters.Codex{}.NewDecoder()
	_, errs = lines(t, cdec,
		`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"`+long+`","aggregated_output":"Read-only file system\n","exit_code":1,"status":"failed"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}`)
	require.Empty(t, errs)
	res = cdec.End(agent.ExitStatus{Known: true})
	require.Equal(t, agent.KindPermission, res.Failure.Kind)
	require.True(t, strings.HasPrefix(res.Summary, "codex's sandbox refused 1 command(s): "+string([]rune(long)[:100])+"…; to allow them, set the profile's sandbox (Codex sandbox_mode)"), res.Summary)
	require.Contains(t, res.Failure.Diagnostic, "$ "+long+": Read-only file system")
	require.Less(t, len(res.Summary), 450)
}
