package adapters_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
)

func TestCommandDecoder_LinesAreLogsExitDecides(t *testing.T) {
	cases := []struct {
		name   string
		exit   agent.ExitStatus
		status string
		kind   string
		want   string
	}{
		{"exit 0", agent.ExitStatus{Known: true}, agent.StatusCompleted, "", "command exited with status 0; last output: ok 3 tests"},
		{"exit 2", agent.ExitStatus{Known: true, Code: 2}, agent.StatusFailed, agent.KindError, "command failed (exit status 2); last output: ok 3 tests"},
		{"signal", agent.ExitStatus{Known: true, Code: -1, Signal: "SIGSEGV"}, agent.StatusFailed, agent.KindError, "command failed (killed by SIGSEGV); last output: ok 3 tests"},
		{"unknown", agent.ExitStatus{}, agent.StatusFailed, agent.KindError, "command failed (exit status unknown); last output: ok 3 tests"},
		{"cancelled though exit 0", agent.ExitStatus{Known: true, Reason: "cancelled"}, agent.StatusCancelled, "",
			"command was stopped by the scheduler (cancelled) before it reported a result; exit status 0; last output: ok 3 tests"},
		{"hard timeout", agent.ExitStatus{Known: true, Code: -1, Signal: "SIGKILL", Reason: "hard_timeout"}, agent.StatusFailed, agent.KindTimeout,
			"command was stopped by the scheduler (hard_timeout) before it reported a result; killed by SIGKILL; last output: ok 3 tests"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dec := adapters.Command{}.NewDecoder()
			msgs, errs := lines(t, dec, `{"type":"worker.result","status":"completed"}`, "ok 3 tests")
			require.Empty(t, errs)
			require.Equal(t, []agent.Message{
				{Type: agent.TypeLog, Level: "info", Message: `{"type":"worker.result","status":"completed"}`},
				{Type: agent.TypeLog, Level: "info", Message: "ok 3 tests"},
			}, msgs, "a command's output is only a log, even when it looks like the protocol")
			res := dec.End(tc.exit)
			require.Equal(t, tc.status, res.Status)
			require.Equal(t, tc.want, res.Summary)
			if tc.kind == "" {
				require.Nil(t, res.Failure)
			} else {
				require.Equal(t, tc.kind, res.Failure.Kind)
			}
		})
	}
}

func TestCommandReal_ExitStatusDecides(t *testing.T) {
	req := launchRequest(t)
	req.Start.Workspace = t.TempDir()
	req.Env = map[string]string{"PATH": os.Getenv("PATH")}
	for _, tc := range []struct {
		argv   []string
		status string
	}{
		{[]string{"sh", "-c", "echo built; exit 0"}, agent.StatusCompleted},
		{[]string{"sh", "-c", "echo 'FAIL: TestX' >&1; exit 3"}, agent.StatusFailed},
	} {
		inv := invocation(t, agent.Profile{Name: "c", Runtime: agent.RuntimeCommand, Command: tc.argv}, req)
		r := launch(t, adapters.Command{}, inv, nil)
		require.Equal(t, tc.status, r.result.Status, r.result.Summary)
		if tc.status == agent.StatusFailed {
			require.Equal(t, "command failed (exit status 3); last output: FAIL: TestX", r.result.Summary)
		}
	}
}

func TestClaudeDecoder_AbortedResultIsDecidedAtEnd(t *testing.T) {
	aborted := `{"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"aborted_streaming","errors":["[ede_diagnostic] result_type=user"],"total_cost_usd":0.001,"usage":{"input_tokens":50,"output_tokens":5}}`
	dec := adapters.NewClaudeCode().NewDecoder()
	msgs, errs := lines(t, dec, `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}`, aborted)
	require.Empty(t, errs)
	require.Equal(t, []string{tLog, tLog}, types(msgs), "no worker.result for an interruption")
	require.Equal(t, "claude-code was interrupted (aborted_streaming)", msgs[1].Message)

	res := dec.End(agent.ExitStatus{Known: true, Reason: "cancelled"})
	require.Equal(t, agent.StatusCancelled, res.Status)
	require.Equal(t, &agent.Usage{InputTokens: 50, OutputTokens: 5, CostUSD: 0.001}, res.Usage)

	res = dec.End(agent.ExitStatus{Known: true})
	require.Equal(t, agent.StatusFailed, res.Status)
	require.Equal(t, agent.KindCrash, res.Failure.Kind)
	require.Equal(t, "claude-code (interrupted: aborted_streaming) ended without reporting a result (exit status 0)", res.Summary)
}

func TestClaudeDecoder_EdgeShapes(t *testing.T) {
	dec := adapters.NewClaudeCode().NewDecoder()
	msgs, errs := lines(t, dec,
		`not json at all`,
		`{"type":"stream_event","event":{"type":"message_start"}}`,
		`{"type":"system","subtype":"status","status":"requesting"}`,
		`{"type":"system","subtype":"compact_boundary"}`,
		`{"type":"brand_new_event","x":1}`,
		// a tool input that is not an object, and a string content
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Odd","input":"raw"}]}}`,
		`{"type":"user","message":{"role":"user","content":"plain text content"}}`,
		// an Edit that failed is no artifact; a Write that worked is one, once
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"/w/a.go","old_string":"x","new_string":"y"}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":"<tool_use_error>String to replace not found</tool_use_error>"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t3","name":"Write","input":{"file_path":"/w/b.go","content":"package b"}},{"type":"thinking","thinking":"hmm"}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":[{"type":"text","text":"File created"}]}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t4","name":"Edit","input":{"file_path":"/w/b.go"}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t4","content":"ok"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"`+strings.Repeat("long ", 60)+`\nsecond line"}]}}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"","num_turns":4,"total_cost_usd":0.5,"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":4}}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"again"}`,
	)
	require.Len(t, errs, 2, "the non-JSON line and the second result")
	require.Equal(t, []string{tProgress, tLog, tProgress, tLog, tProgress, tLog, tProgress, tLog, tProgress, tLog, tResult}, types(msgs))
	require.Equal(t, "Odd", msgs[0].Message)
	require.Equal(t, agent.Message{Type: tLog, Level: "warn", Message: "plain text content"}, msgs[1])
	require.Equal(t, "Edit /w/a.go", msgs[2].Message)
	require.Equal(t, "warn", msgs[3].Level)
	require.True(t, strings.HasSuffix(msgs[8].Message, "…"), "a long text is cut in progress")
	require.Equal(t, strings.Repeat("long ", 60)+"\nsecond line", msgs[9].Message, "and kept whole in the log")
	res := dec.End(agent.ExitStatus{Known: true})
	require.Equal(t, agent.WorkerResult{Status: agent.StatusCompleted,
		Summary:   "claude-code completed in 4 turn(s) without a final message",
		Artifacts: []string{"/w/b.go"},
		Usage:     &agent.Usage{InputTokens: 60, OutputTokens: 4, CostUSD: 0.5, CacheReadTokens: 30, CacheWriteTokens: 20}}, res)
}

func TestClaudeDecoder_FailureKinds(t *testing.T) {
	for _, tc := range []struct{ name, line, kind, summary string }{
		{"billing", `{"type":"result","is_error":true,"terminal_reason":"api_error","api_error_status":400,"api_error_type":"billing_error","result":"Credit balance is too low"}`,
			agent.KindQuota, "the model API refused for billing or quota (HTTP 400 billing_error): Credit balance is too low"},
		{"403", `{"type":"result","is_error":true,"terminal_reason":"api_error","api_error_status":403,"api_error_type":"permission_error","result":"no access"}`,
			agent.KindAuth, "the model API rejected the credentials (HTTP 403 permission_error): no access"},
		{"429", `{"type":"result","is_error":true,"terminal_reason":"api_error","api_error_status":429,"api_error_type":"rate_limit_error","result":"rate limited"}`,
			agent.KindRateLimit, "the model provider's rate limit was hit (HTTP 429 rate_limit_error): rate limited; the profile waits for the window to reset"},
		{"other error", `{"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"completed","errors":["tool crashed"]}`,
			agent.KindError, "claude-code failed: tool crashed"},
		{"bare error", `{"type":"result","subtype":"error_x","is_error":true}`,
			agent.KindError, "claude-code failed: no message (subtype error_x, terminal reason )"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := adapters.NewClaudeCode().NewDecoder()
			_, errs := lines(t, dec, tc.line)
			require.Empty(t, errs)
			res := dec.End(agent.ExitStatus{Known: true, Code: 1})
			require.Equal(t, agent.StatusFailed, res.Status)
			require.Equal(t, tc.kind, res.Failure.Kind)
			require.Equal(t, tc.summary, res.Summary)
		})
	}
}

// Killed while retrying a 401 for minutes: no result, but the retries said why.
func TestClaudeDecoder_AuthRetriesWithoutResultAreAuth(t *testing.T) {
	dec := adapters.NewClaudeCode().NewDecoder()
	_, errs := lines(t, dec,
		`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":500,"error_status":401,"error":"authentication_failed"}`)
	require.Empty(t, errs)
	res := dec.End(agent.ExitStatus{Known: true, Code: -1, Signal: "SIGKILL", Reason: "hard_timeout"})
	require.Equal(t, agent.KindAuth, res.Failure.Kind)
	require.Equal(t, "model API error (HTTP 401, authentication_failed)", res.Failure.Diagnostic)
	require.True(t, agent.EnvironmentKind(res.Failure.Kind))
}

func TestCodexDecoder_FailureKindsFromMessages(t *testing.T) {
	for _, tc := range []struct{ msg, kind string }{
		{"unexpected status 401 Unauthorized: Incorrect API key provided", agent.KindAuth},
		{"unexpected status 403 Forbidden: Country, region, or territory not supported", agent.KindAuth},
		{"Missing environment variable: `OPENAI_API_KEY`.", agent.KindAuth},
		{"exceeded retry limit, last status: 429 Too Many Requests, You exceeded your current quota", agent.KindQuota},
		{"You've hit your usage limit.", agent.KindRateLimit},
		{"exceeded retry limit, last status: 429 Too Many Requests", agent.KindRateLimit},
		{"unexpected status 502 Bad Gateway: upstream", agent.KindModel},
		{"We’re currently experiencing high demand, which may cause temporary errors.", agent.KindModel},
		{"stream disconnected before completion: error sending request", agent.KindModel},
		{"Codex ran out of room in the model's context window.", agent.KindError},
		{"tool failed; url: http://127.0.0.1:18500/v1/responses, request id: req_mock_401a, trace 503x", agent.KindError},
		{"", agent.KindError},
	} {
		dec := adapters.Codex{}.NewDecoder()
		line := `{"type":"turn.failed","error":{"message":` + quote(tc.msg) + `}}`
		_, errs := lines(t, dec, `{"type":"thread.started","thread_id":"t"}`, `{"type":"turn.started"}`, line)
		require.Empty(t, errs)
		res := dec.End(agent.ExitStatus{Known: true, Code: 1})
		require.Equal(t, agent.StatusFailed, res.Status)
		require.Equal(t, tc.kind, res.Failure.Kind, tc.msg)
		require.Equal(t, tc.msg, res.Failure.Diagnostic)
	}
}

func TestCodexDecoder_NoTerminalEvent(t *testing.T) {
	stream := []string{`{"type":"thread.started","thread_id":"t"}`, `{"type":"turn.started"}`}
	dec := adapters.Codex{}.NewDecoder()
	_, _ = lines(t, dec, stream...)
	res := dec.End(agent.ExitStatus{Known: true, Code: 143})
	require.Equal(t, agent.KindCrash, res.Failure.Kind)
	require.Equal(t, "codex ended without reporting a result (exit status 143)", res.Summary)
	require.Equal(t, agent.StatusCancelled, dec.End(agent.ExitStatus{Known: true, Code: 1, Reason: "cancelled"}).Status)

	dec = adapters.Codex{}.NewDecoder()
	_, _ = lines(t, dec, append(stream, `{"type":"error","message":"Reconnecting... 1/5 (unexpected status 401 Unauthorized: bad key)"}`)...)
	require.Equal(t, agent.KindAuth, dec.End(agent.ExitStatus{Known: true, Code: -1, Signal: "SIGKILL"}).Failure.Kind)

	dec = adapters.Codex{}.NewDecoder()
	_, _ = lines(t, dec, append(stream, `{"type":"error","message":"Reconnecting... 1/5 (stream disconnected)"}`)...)
	require.Equal(t, agent.KindModel, dec.End(agent.ExitStatus{Known: true, Code: -1, Signal: "SIGKILL"}).Failure.Kind)
}

func TestCodexDecoder_OtherItems(t *testing.T) {
	dec := adapters.Codex{}.NewDecoder()
	msgs, errs := lines(t, dec,
		`garbage`,
		`{"type":"item.started","item":{"id":"i0","type":"todo_list","items":[{"text":"a","completed":true},{"text":"b","completed":false}]}}`,
		`{"type":"item.completed","item":{"id":"i1","type":"reasoning","text":"think"}}`,
		`{"type":"item.started","item":{"id":"i2","type":"web_search","query":"go generics"}}`,
		`{"type":"item.completed","item":{"id":"i3","type":"command_execution","command":"go test","aggregated_output":"FAIL\n","exit_code":1,"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"i4","type":"file_change","changes":[{"path":"/w/x.go","kind":"update"}],"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"i5","type":"file_change","changes":[{"path":"/w/y.go","kind":"update"},{"path":"/w/z.go","kind":"delete"}],"status":"completed"}}`,
		`{"type":"item.completed","item":{"id":"i6","type":"future_item"}}`,
		`{"type":"item.completed"}`,
		`{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":2,"output_tokens":1}}`,
		`{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":1}}`,
	)
	require.Len(t, errs, 2, "garbage, an item event without an item")
	require.Equal(t, []agent.Message{
		agent.UsageMessage(agent.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 2}),
		{Type: tLog, Level: "warn", Message: "codex: a second terminal event was ignored: the first one stands"},
	}, msgs[len(msgs)-2:], "the second terminal event's spend counts; the first result stands")
	require.Equal(t, []agent.Message{
		{Type: tProgress, Message: "plan: 1 of 2 steps done"},
		{Type: tLog, Level: "debug", Message: "think"},
		{Type: tProgress, Message: "web search: go generics"},
		{Type: tLog, Level: "warn", Message: "$ go test → failed (exit 1)\nFAIL"},
		{Type: tLog, Level: "warn", Message: "file change failed: update /w/x.go"},
		{Type: tLog, Level: "info", Message: "files changed: update /w/y.go, delete /w/z.go"},
	}, msgs[:6])
	require.Equal(t, agent.WorkerResult{Status: agent.StatusCompleted, Summary: "codex completed its turn without a final message",
		Artifacts: []string{"/w/y.go", "/w/z.go"}, Usage: &agent.Usage{InputTokens: 5, OutputTokens: 1, CacheReadTokens: 2}},
		dec.End(agent.ExitStatus{Known: true}))
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// The CLI decoders refuse a line with bytes that are not UTF-8 naming the field, and go on.
func TestCLIDecoders_InvalidUTF8IsAProtocolErrorNamingTheField(t *testing.T) {
	for name, dec := range map[string]agent.Decoder{"claude-code": adapters.NewClaudeCode().NewDecoder(), "codex": adapters.Codex{}.NewDecoder()} {
		_, err := dec.Line([]byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"h` + "\xc0" + `i"}]}}`))
		require.ErrorContains(t, err, name+": protocol error: message.content[0].text: is not valid UTF-8 (byte 0xc0", name)
	}
}
