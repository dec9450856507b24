package adapters_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
)

// The transcripts in testdata/ were recorded from the real CLIs (shared/fixtures/agents,
// described in shared/reference/agent-clis.md). Every one is decoded here and its mapped
// events and final result asserted.

const (
	tLog      = agent.TypeLog
	tProgress = agent.TypeProgress
	tResult   = agent.TypeResult
)

var (
	exit0      = agent.ExitStatus{Known: true, Code: 0}
	exit1      = agent.ExitStatus{Known: true, Code: 1}
	claudeTool = "claude-code"
)

type fixtureCase struct {
	name   string // defaults to file
	file   string
	exit   agent.ExitStatus
	types  []string
	result agent.WorkerResult
	check  func(t *testing.T, msgs []agent.Message)
	// usage is the task.usage reports the transcript gives, in order (cumulative). They are
	// asserted apart from types, which lists the other messages.
	usage []agent.Usage
}

func rep(typ string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = typ
	}
	return out
}

func seq(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch x := p.(type) {
		case string:
			out = append(out, x)
		case []string:
			out = append(out, x...)
		}
	}
	return out
}

func failed(kind, tool, summary, diag string, usage *agent.Usage) agent.WorkerResult {
	return agent.WorkerResult{Status: agent.StatusFailed, Summary: summary, Usage: usage,
		Failure: &agent.Failure{Kind: kind, Tool: tool, Diagnostic: diag, Summary: summary}}
}

func completed(summary string, usage *agent.Usage, artifacts ...string) agent.WorkerResult {
	return agent.WorkerResult{Status: agent.StatusCompleted, Summary: summary, Usage: usage, Artifacts: artifacts}
}

var (
	claudeDone = &agent.Usage{InputTokens: 200, OutputTokens: 40, CostUSD: 0.0016}
	// The streamed counts of the two API messages of a two-turn transcript: each message id
	// once (its text and tool_use events repeat the same usage), output as message_start
	// reported it (the final count arrives only in the result).
	twoTurns  = []agent.Usage{{InputTokens: 100, OutputTokens: 1}, {InputTokens: 200, OutputTokens: 2}}
	oneTurn   = []agent.Usage{{InputTokens: 100, OutputTokens: 1}}
	codexDone = &agent.Usage{InputTokens: 200, OutputTokens: 40}
	// codexTurn is the task.usage a one-turn Codex transcript gives at turn.completed, before
	// its result: the turn's counts, the same as the result's.
	codexTurn   = []agent.Usage{*codexDone}
	noUsage     = &agent.Usage{}
	claudeWrite = seq(tLog, tProgress, tProgress, tLog, tProgress, tResult)
	claudeMCP   = seq(tLog, tProgress, tLog, tProgress, tResult)
	codexAuth   = "unexpected status 401 Unauthorized: Incorrect API key provided: dummy., url: http://127.0.0.1:18116/v1/responses, request id: req_mock_505a51959ee2"
	highDemand  = "We’re currently experiencing high demand, which may cause temporary errors."
	invalidKey  = "Invalid API key · Fix external API key"
	mcpDenied   = `claude-code was refused 1 tool call(s) under permission mode acceptEdits: mcp__probe__status; to allow them, add "mcp__probe__status" (or "mcp__probe" for every tool of that MCP server) to the profile's allowed_tools (Claude Code --allowedTools) or choose a permission_mode that permits them`
	bashDenied  = `claude-code was refused 1 tool call(s) under permission mode acceptEdits: Bash: git push origin main; to allow them, add "Bash" to the profile's allowed_tools (Claude Code --allowedTools) or choose a permission_mode that permits them`
	connRefused = "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)"
)

func claudeAPI(status, msg string) string {
	return "API Error: " + status + " This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (" + msg + ")."
}

var fixtureCases = []fixtureCase{
	{file: "claude-stream.ndjson", usage: twoTurns, exit: exit0, types: claudeWrite,
		result: completed("done", claudeDone, "/home/dev/runs/write1/hello.txt"),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, []agent.Message{
				{Type: tLog, Level: "info", Message: "claude-code 2.1.332 started: model claude-opus-5-5, permission mode bypassPermissions, session b9b3f90e-702f-497f-98f9-0465b3c7803b, cwd /home/dev/runs/write1"},
				{Type: tProgress, Message: "Writing the file."},
				{Type: tProgress, Message: "Write /home/dev/runs/write1/hello.txt"},
				{Type: tLog, Level: "info", Message: "tool result (ok): File created successfully at: /home/dev/runs/write1/hello.txt (file state is current in your context — no need to Read it back)"},
				{Type: tProgress, Message: "done"},
			}, msgs[:5])
		}},
	{file: "claude-stream-acceptedits.ndjson", usage: twoTurns, exit: exit0, types: claudeWrite,
		result: completed("done", claudeDone, "/home/dev/runs/acceptedits/hello.txt")},
	{file: "claude-stream-partial-messages.ndjson", usage: twoTurns, exit: exit0, types: claudeWrite,
		result: completed("done", claudeDone, "/home/dev/runs/partial/hello.txt")},
	{file: "claude-max-turns.ndjson", usage: oneTurn, exit: exit1, types: seq(tLog, tProgress, tProgress, tLog, tResult),
		result: failed(agent.KindError, claudeTool, "claude-code stopped at its turn limit: Reached maximum number of turns (1)",
			"Reached maximum number of turns (1)", &agent.Usage{InputTokens: 100, OutputTokens: 20, CostUSD: 0.0008})},
	{file: "claude-401-maxretries0.ndjson", exit: exit1, types: seq(tLog, tLog, tResult),
		result: failed(agent.KindAuth, claudeTool, "the model API rejected the credentials (HTTP 401 authentication_error): "+invalidKey, invalidKey, noUsage),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tLog, Level: "error", Message: "model API error: " + invalidKey + " (HTTP 401 authentication_error)"}, msgs[1])
		}},
	{file: "claude-401.ndjson", exit: exit1, types: seq(tLog, rep(tLog, 10), tLog, tResult),
		result: failed(agent.KindAuth, claudeTool, "the model API rejected the credentials (HTTP 401 authentication_error): "+invalidKey, invalidKey, noUsage),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tLog, Level: "warn", Message: "model API error (HTTP 401, authentication_failed); retry 1 of 10 in 506 ms"}, msgs[1])
			require.Equal(t, agent.Message{Type: tLog, Level: "warn", Message: "model API error (HTTP 401, authentication_failed); retry 10 of 10 in 38390 ms"}, msgs[10])
		}},
	{file: "claude-500.ndjson", exit: exit1, types: seq(tLog, tLog, tLog, tLog, tResult),
		result: failed(agent.KindModel, claudeTool, "the model API failed (HTTP 500 api_error): "+claudeAPI("500 Internal server error.", "127.0.0.1:18095"),
			claudeAPI("500 Internal server error.", "127.0.0.1:18095"), noUsage)},
	{file: "claude-529.ndjson", exit: exit1, types: seq(tLog, tLog, tLog, tLog, tResult),
		result: failed(agent.KindModel, claudeTool, "the model API failed (HTTP 529 overloaded_error): "+claudeAPI("529 Overloaded.", "127.0.0.1:18096"),
			claudeAPI("529 Overloaded.", "127.0.0.1:18096"), noUsage)},
	{file: "claude-connrefused-maxretries1.ndjson", exit: exit1, types: seq(tLog, tLog, tLog, tResult),
		result: failed(agent.KindModel, claudeTool, "the model API failed (no HTTP status): "+connRefused, connRefused, noUsage),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tLog, Level: "error", Message: "model API error: " + connRefused}, msgs[2])
		}},
	// Killed by the scheduler's hard timeout while retrying for minutes: no result line.
	{name: "claude-connrefused-default-retries (hard timeout)", file: "claude-connrefused-default-retries.ndjson",
		exit:  agent.ExitStatus{Known: true, Code: -1, Signal: "SIGKILL", Reason: "hard_timeout"},
		types: seq(tLog, rep(tLog, 10)),
		result: failed(agent.KindTimeout, claudeTool, "claude-code was stopped by the scheduler (hard_timeout) before it reported a result; killed by SIGKILL",
			"model API error (no HTTP status, unknown)", nil)},
	{name: "claude-connrefused-default-retries (killed by someone else)", file: "claude-connrefused-default-retries.ndjson",
		exit:  agent.ExitStatus{Known: true, Code: -1, Signal: "SIGKILL"},
		types: seq(tLog, rep(tLog, 10)),
		result: failed(agent.KindModel, claudeTool, "claude-code ended without a result while the model API was failing (killed by SIGKILL)",
			"model API error (no HTTP status, unknown)", nil)},
	// SIGINT: exit 0 and no result line. Failed unless the scheduler sent it.
	{name: "claude-sigint (not ours)", file: "claude-sigint.ndjson", exit: exit0, types: seq(tLog, tLog),
		result: failed(agent.KindCrash, claudeTool, "claude-code ended without reporting a result (exit status 0)", "", nil),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tLog, Level: "warn", Message: "[Request interrupted by user]"}, msgs[1])
		}},
	{name: "claude-sigint (cancelled)", file: "claude-sigint.ndjson", exit: agent.ExitStatus{Known: true, Reason: "cancelled"}, types: seq(tLog, tLog),
		result: agent.WorkerResult{Status: agent.StatusCancelled,
			Summary: "claude-code was stopped by the scheduler (cancelled) before it reported a result; exit status 0"}},
	{file: "claude-mcp.ndjson", usage: twoTurns, exit: exit0, types: claudeMCP, result: completed("done", claudeDone),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tProgress, Message: "mcp__probe__status"}, msgs[1])
			require.Equal(t, agent.Message{Type: tLog, Level: "info", Message: "tool result (ok): status: 2 missions running, 1 queued"}, msgs[2])
		}},
	{file: "claude-mcp-http.ndjson", usage: twoTurns, exit: exit0, types: claudeMCP, result: completed("done", claudeDone)},
	{file: "claude-mcp-failed-server.ndjson", usage: twoTurns, exit: exit0, types: seq(tLog, tLog, tProgress, tLog, tProgress, tResult),
		result: completed("done", claudeDone),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tLog, Level: "warn", Message: "MCP server broken: failed"}, msgs[1])
			require.Equal(t, agent.Message{Type: tLog, Level: "warn", Message: "tool result (error): <tool_use_error>Error: No such tool available: mcp__broken__status</tool_use_error>"}, msgs[3])
		}},
	// A denied call fails the run with kind permission (an escalation, no retry) even though
	// Claude Code reported success: the refused call's work was not done.
	{file: "claude-mcp-denied-no-allowedTools.ndjson", usage: twoTurns, exit: exit0, types: seq(tLog, tProgress, tLog, tLog, tProgress, tLog, tResult),
		result: failed(agent.KindPermission, "mcp__probe__status", mcpDenied,
			"mcp__probe__status: Claude requested permissions to use mcp__probe__status, but you haven't granted it yet.\nclaude-code's last message: done", claudeDone),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tLog, Level: "warn", Message: "permission denied for tool mcp__probe__status: Claude requested permissions to use mcp__probe__status, but you haven't granted it yet."}, msgs[2])
			require.Equal(t, agent.Message{Type: tLog, Level: "warn", Message: "1 tool call(s) were denied: mcp__probe__status"}, msgs[5])
		}},

	// Recorded by agent/adapters' real-CLI test (claude 2.1.332, acceptEdits, a scripted
	// Bash call): the denial names the command.
	{file: "claude-bash-denied-acceptedits.ndjson", usage: []agent.Usage{{InputTokens: 100}, {InputTokens: 200}}, exit: exit0, types: seq(tLog, tProgress, tProgress, tLog, tLog, tProgress, tLog, tResult),
		result: failed(agent.KindPermission, "Bash", bashDenied,
			"Bash: git push origin main: This command requires approval\nclaude-code's last message: done", claudeDone),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tLog, Level: "warn", Message: "permission denied for tool Bash: This command requires approval"}, msgs[3])
		}},

	{file: "codex-exec.jsonl", usage: codexTurn, exit: exit0, types: seq(tLog, tProgress, tProgress, tProgress, tLog, tProgress, tResult),
		result: completed("done", codexDone),
		check: func(t *testing.T, msgs []agent.Message) {
			cmd := `/bin/bash -lc "printf 'hello from codex mock\\n' > hello.txt && ls -la hello.txt"`
			require.Equal(t, []agent.Message{
				{Type: tLog, Level: "info", Message: "codex thread 01a22975-f5e4-7fa0-8d2c-f273d7061ed2 started"},
				{Type: tProgress, Message: "codex turn started"},
				{Type: tProgress, Message: "Creating hello.txt."},
				{Type: tProgress, Message: "$ " + cmd},
				{Type: tLog, Level: "info", Message: "$ " + cmd + " → completed (exit 0)\n-rw-r--r-- 1 root root 22 Nov 29 22:38 hello.txt"},
				{Type: tProgress, Message: "done"},
			}, msgs[:6])
		}},
	{file: "codex-exec-apply-patch.jsonl", usage: codexTurn, exit: exit0, types: seq(tLog, tProgress, tProgress, tLog, tProgress, tResult),
		result: completed("done", codexDone, "/home/dev/runs/cx-patch/hello.txt"),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tProgress, Message: "editing files: add /home/dev/runs/cx-patch/hello.txt"}, msgs[2])
			require.Equal(t, agent.Message{Type: tLog, Level: "info", Message: "files changed: add /home/dev/runs/cx-patch/hello.txt"}, msgs[3])
		}},
	{file: "codex-mcp.jsonl", usage: codexTurn, exit: exit0, types: seq(tLog, tProgress, tProgress, tLog, tProgress, tResult),
		result: completed("done", codexDone),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tLog, Level: "info", Message: "MCP probe.status completed"}, msgs[3])
		}},
	{file: "codex-mcp-needs-approval.jsonl", usage: codexTurn, exit: exit0, types: seq(tLog, tProgress, tProgress, tLog, tProgress, tResult),
		result: completed("done", codexDone),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tLog, Level: "warn", Message: "MCP probe.status failed: MCP tool call requires approval, but approval policy is never"}, msgs[3])
		}},
	// The sandbox denied `git commit`: Codex shows no item for it; the turn still completes.
	{file: "codex-sandbox-denied-git-commit-in-worktree.jsonl", usage: codexTurn, exit: exit0, types: seq(tLog, tProgress, tProgress, tProgress, tResult),
		result: completed("done", codexDone)},
	{file: "codex-unknown-model-warning.jsonl", usage: []agent.Usage{{InputTokens: 100, OutputTokens: 20}}, exit: exit0, types: seq(tLog, tLog, tProgress, tProgress, tResult),
		result: completed("ok", &agent.Usage{InputTokens: 100, OutputTokens: 20}),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tLog, Level: "warn", Message: "codex: Model metadata for `gpt-5.1-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}, msgs[1])
		}},
	{file: "codex-401.jsonl", exit: exit1, types: seq(tLog, tProgress, rep(tLog, 6), tResult),
		result: failed(agent.KindAuth, "codex", "the model API rejected the credentials: "+codexAuth, codexAuth, nil),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, agent.Message{Type: tLog, Level: "warn", Message: "codex: Reconnecting... 1/5 (unexpected status 401 Unauthorized: Incorrect API key provided: dummy., url: http://127.0.0.1:18116/v1/responses, request id: req_mock_10787a685771)"}, msgs[2])
		}},
	{file: "codex-500.jsonl", exit: exit1, types: seq(tLog, tProgress, rep(tLog, 6), tResult),
		result: failed(agent.KindModel, "codex", "the model API failed: "+highDemand, highDemand, nil)},
	{file: "codex-500-noretry.jsonl", exit: exit1, types: seq(tLog, tProgress, tLog, tResult),
		result: failed(agent.KindModel, "codex", "the model API failed: "+highDemand, highDemand, nil)},
}

// decodeFile feeds every line of a transcript to a fresh decoder of the adapter.
func decodeFile(t *testing.T, a agent.Adapter, path string) (agent.Decoder, []agent.Message) {
	t.Helper()
	body, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := a.NewDecoder()
	var msgs []agent.Message
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		out, err := dec.Line(sc.Bytes())
		require.NoError(t, err, "line %.200s", sc.Text())
		msgs = append(msgs, out...)
	}
	require.NoError(t, sc.Err())
	return dec, msgs
}

func adapterFor(t *testing.T, file string) agent.Adapter {
	rt := agent.RuntimeClaudeCode
	if strings.HasPrefix(file, "codex-") {
		rt = agent.RuntimeCodex
	}
	a, err := adapters.For(rt)
	require.NoError(t, err)
	return a
}

func TestFixtures_EveryTranscriptMapped(t *testing.T) {
	for _, tc := range fixtureCases {
		name := tc.name
		if name == "" {
			name = tc.file
		}
		t.Run(name, func(t *testing.T) {
			dec, all := decodeFile(t, adapterFor(t, tc.file), filepath.Join("testdata", tc.file))
			msgs, usage := splitUsage(all)
			require.Equal(t, tc.usage, usage, "task.usage reports")
			require.Equal(t, tc.types, types(msgs))
			res := dec.End(tc.exit)
			require.Equal(t, tc.result, res)
			if last := msgs[len(msgs)-1]; last.Type == tResult {
				require.Equal(t, res, *last.WorkerResult, "the streamed worker.result is the final one")
			}
			for _, m := range msgs {
				if m.Type == tLog {
					require.Contains(t, []string{"debug", "info", "warn", "error"}, m.Level)
				}
				require.NotContains(t, m.Message, "\r")
			}
			if tc.check != nil {
				tc.check(t, msgs)
			}
		})
	}
}

// splitUsage separates the task.usage reports from the other messages.
func splitUsage(all []agent.Message) ([]agent.Message, []agent.Usage) {
	var msgs []agent.Message
	var usage []agent.Usage
	for _, m := range all {
		if u, ok := m.ReportedUsage(); ok {
			usage = append(usage, u)
			continue
		}
		msgs = append(msgs, m)
	}
	return msgs, usage
}

// Every transcript in testdata has at least one case, so a new recording cannot be forgotten.
func TestFixtures_AllFilesCovered(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*"))
	require.NoError(t, err)
	covered := map[string]bool{}
	for _, tc := range fixtureCases {
		covered[tc.file] = true
	}
	var missing []string
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.IsDir() {
			continue // testdata/fuzz: the fuzz targets' seeds (decode_fuzz_test.go)
		}
		if !covered[filepath.Base(f)] {
			missing = append(missing, filepath.Base(f))
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "transcripts without a case in fixtureCases")
	require.GreaterOrEqual(t, len(files), 24)
}
