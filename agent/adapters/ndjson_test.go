package adapters_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
)

func lines(t *testing.T, dec agent.Decoder, in ...string) ([]agent.Message, []error) {
	t.Helper()
	var msgs []agent.Message
	var errs []error
	for _, l := range in {
		out, err := dec.Line([]byte(l))
		msgs = append(msgs, out...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return msgs, errs
}

func pct(v float64) *float64 { return &v }

func TestNDJSONDecoder_PassesKnownTypesIgnoresUnknown(t *testing.T) {
	dec := adapters.NDJSON{}.NewDecoder()
	msgs, errs := lines(t, dec,
		`{"type":"agent.heartbeat"}`,
		`{"type":"task.progress","percent":40,"message":"parsing","extra":{"x":1}}`,
		`{"type":"task.progress","percent":140}`,
		`{"type":"task.progress","percent":-3}`,
		`{"type":"task.log","level":"warn","message":"slow disk"}`,
		`{"type":"task.log","level":"shout","message":"unknown level"}`,
		`{"type":"task.checkpoint","message":"half","checkpoint":{"step":2,"files":["a.go"]}}`,
		`{"type":"agent.telemetry","foo":1}`,
		`{"type":"worker.result","status":"completed","summary":"parser done","artifacts":["parser.go"],"evidence":["go test ./... ok"],"usage":{"input_tokens":10,"output_tokens":5,"cost_usd":0.25}}`,
	)
	require.Empty(t, errs)
	require.Equal(t, []agent.Message{
		{Type: agent.TypeHeartbeat},
		{Type: agent.TypeProgress, Percent: pct(40), Message: "parsing"},
		{Type: agent.TypeProgress, Percent: pct(100)},
		{Type: agent.TypeProgress, Percent: pct(0)},
		{Type: agent.TypeLog, Level: "warn", Message: "slow disk"},
		{Type: agent.TypeLog, Level: "info", Message: "unknown level"},
		{Type: agent.TypeCheckpoint, Message: "half", Checkpoint: json.RawMessage(`{"step":2,"files":["a.go"]}`)},
	}, msgs[:7])
	want := agent.WorkerResult{Status: agent.StatusCompleted, Summary: "parser done", Artifacts: []string{"parser.go"},
		Evidence: []string{"go test ./... ok"}, Usage: &agent.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.25}}
	require.Len(t, msgs, 8)
	require.Equal(t, agent.TypeResult, msgs[7].Type)
	require.Equal(t, want, *msgs[7].WorkerResult)
	require.Equal(t, want, dec.End(agent.ExitStatus{Known: true, Code: 3}), "the reported result stands whatever the exit")
}

func TestNDJSONDecoder_GarbageIsAnErrorNotFatal(t *testing.T) {
	dec := adapters.NDJSON{}.NewDecoder()
	msgs, errs := lines(t, dec, `Starting agent v1.2…`, `{"no_type":true}`, `[1,2]`, `{"type":"agent.heartbeat"}`)
	require.Len(t, errs, 3)
	require.Equal(t, []agent.Message{{Type: agent.TypeHeartbeat}}, msgs)
}

func TestNDJSONDecoder_InvalidResultBecomesProtocolFailure(t *testing.T) {
	for _, tc := range []struct{ name, line, reason string }{
		{"unknown status", `{"type":"worker.result","status":"done","summary":"all good"}`, `status "done" is not one of completed, failed, blocked, cancelled`},
		{"missing status", `{"type":"worker.result","summary":"all good"}`, "status is missing"},
		{"failed without failure", `{"type":"worker.result","status":"failed","summary":"broke"}`, "status failed needs a failure with a kind"},
		{"failed without kind", `{"type":"worker.result","status":"failed","failure":{"summary":"x"}}`, "status failed needs a failure with a kind"},
		{"blocked without failure", `{"type":"worker.result","status":"blocked","decision":"which db?"}`, "status blocked needs a failure with a kind"},
		{"bad verdict", `{"type":"worker.result","status":"completed","verdict":"lgtm"}`, `verdict "lgtm" is not one of approved, minor, severe, insufficient`},
		{"bad finding severity", `{"type":"worker.result","status":"completed","verdict":"minor","findings":[{"severity":"nit","message":"x"}]}`, `finding 0: severity "nit" is not minor or severe`},
		{"negative usage", `{"type":"worker.result","status":"completed","usage":{"input_tokens":-1}}`, "usage must not be negative"},
		{"wrong field type", `{"type":"worker.result","status":7}`, "it does not match the schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := adapters.NDJSON{}.NewDecoder()
			msgs, errs := lines(t, dec, tc.line)
			require.Empty(t, errs)
			require.Len(t, msgs, 1)
			res := dec.End(agent.ExitStatus{Known: true})
			require.Equal(t, res, *msgs[0].WorkerResult)
			require.Equal(t, agent.StatusFailed, res.Status)
			require.Equal(t, agent.KindProtocol, res.Failure.Kind)
			require.Equal(t, agent.TypeResult, res.Failure.Tool)
			require.Contains(t, res.Summary, "agent reported an invalid worker.result: "+tc.reason)
			require.Equal(t, tc.line, res.Failure.Diagnostic)
		})
	}
}

func TestNDJSONDecoder_InvalidResultKeepsUsageAndSummary(t *testing.T) {
	dec := adapters.NDJSON{}.NewDecoder()
	_, errs := lines(t, dec, `{"type":"worker.result","status":"finished","summary":"wrote the parser","usage":{"input_tokens":7,"output_tokens":3}}`)
	require.Empty(t, errs)
	res := dec.End(agent.ExitStatus{Known: true})
	require.Equal(t, `agent reported an invalid worker.result: status "finished" is not one of completed, failed, blocked, cancelled; its summary: wrote the parser`, res.Summary)
	require.Equal(t, &agent.Usage{InputTokens: 7, OutputTokens: 3}, res.Usage)
}

func TestNDJSONDecoder_ValidFailuresAndReviewsPass(t *testing.T) {
	dec := adapters.NDJSON{}.NewDecoder()
	_, errs := lines(t, dec, `{"type":"worker.result","status":"blocked","summary":"need a decision","decision":"postgres or sqlite?","failure":{"kind":"permission","summary":"cannot choose"}}`)
	require.Empty(t, errs)
	require.Equal(t, agent.WorkerResult{Status: agent.StatusBlocked, Summary: "need a decision", Decision: "postgres or sqlite?",
		Failure: &agent.Failure{Kind: agent.KindPermission, Summary: "cannot choose"}}, dec.End(agent.ExitStatus{Known: true}))

	dec = adapters.NDJSON{}.NewDecoder()
	_, errs = lines(t, dec, `{"type":"worker.result","status":"completed","verdict":"severe","findings":[{"severity":"severe","path":"a.go","line":3,"message":"nil deref"}]}`)
	require.Empty(t, errs)
	require.Equal(t, agent.VerdictSevere, dec.End(agent.ExitStatus{Known: true}).Verdict)
}

func TestNDJSONDecoder_SecondResultIgnored(t *testing.T) {
	dec := adapters.NDJSON{}.NewDecoder()
	msgs, errs := lines(t, dec,
		`{"type":"worker.result","status":"completed","summary":"first"}`,
		`{"type":"worker.result","status":"failed","failure":{"kind":"error"},"summary":"second"}`)
	require.Len(t, msgs, 1)
	require.Len(t, errs, 1)
	require.Equal(t, "first", dec.End(agent.ExitStatus{Known: true}).Summary)
}

func TestNDJSONDecoder_NoResult(t *testing.T) {
	cases := []struct {
		name   string
		exit   agent.ExitStatus
		status string
		kind   string
		want   string
	}{
		{"exit 0 is still a crash", agent.ExitStatus{Known: true, Code: 0}, agent.StatusFailed, agent.KindCrash, "agent ended without reporting a result (exit status 0)"},
		{"exit 2", agent.ExitStatus{Known: true, Code: 2}, agent.StatusFailed, agent.KindCrash, "agent ended without reporting a result (exit status 2)"},
		{"killed", agent.ExitStatus{Known: true, Code: -1, Signal: "SIGKILL"}, agent.StatusFailed, agent.KindCrash, "agent ended without reporting a result (killed by SIGKILL)"},
		{"unknown", agent.ExitStatus{}, agent.StatusFailed, agent.KindCrash, "agent ended without reporting a result (exit status unknown)"},
		{"hard timeout", agent.ExitStatus{Known: true, Code: -1, Signal: "SIGTERM", Reason: "hard_timeout"}, agent.StatusFailed, agent.KindTimeout,
			"agent was stopped by the scheduler (hard_timeout) before it reported a result; killed by SIGTERM"},
		{"stalled", agent.ExitStatus{Known: true, Code: -1, Signal: "SIGKILL", Reason: "stalled"}, agent.StatusFailed, agent.KindTimeout,
			"agent was stopped by the scheduler (stalled) before it reported a result; killed by SIGKILL"},
		{"cancelled", agent.ExitStatus{Known: true, Code: 143, Reason: "cancelled"}, agent.StatusCancelled, "",
			"agent was stopped by the scheduler (cancelled) before it reported a result; exit status 143"},
		{"lease lost", agent.ExitStatus{Known: true, Code: -1, Signal: "SIGTERM", Reason: "lease_lost"}, agent.StatusCancelled, "",
			"agent was stopped by the scheduler (lease_lost) before it reported a result; killed by SIGTERM"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dec := adapters.NDJSON{}.NewDecoder()
			_, _ = lines(t, dec, `{"type":"task.progress","message":"working"}`)
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

func TestNDJSONDecoder_YieldWithoutResultEndsCancelled(t *testing.T) {
	dec := adapters.NDJSON{}.NewDecoder()
	msgs, errs := lines(t, dec, `{"type":"task.yield","reason":"children","checkpoint":{"wait":["m-2"]}}`)
	require.Empty(t, errs)
	require.Equal(t, []agent.Message{{Type: agent.TypeYield, Reason: "children", Checkpoint: json.RawMessage(`{"wait":["m-2"]}`)}}, msgs)
	res := dec.End(agent.ExitStatus{Known: true})
	require.Equal(t, agent.StatusCancelled, res.Status)
	require.Equal(t, "agent yielded (children) and ended without a worker.result (exit status 0)", res.Summary)
}

func TestNDJSONDecoder_HugeLine(t *testing.T) {
	dec := adapters.NDJSON{}.NewDecoder()
	big := strings.Repeat("x", 5<<20)
	msgs, errs := lines(t, dec, `{"type":"task.log","message":"`+big+`"}`)
	require.Empty(t, errs)
	require.Len(t, msgs[0].Message, 5<<20)
}

func TestDecoders_StreamedResultIsACopy(t *testing.T) {
	for _, tc := range []struct {
		a    agent.Adapter
		line string
	}{
		{adapters.NDJSON{}, `{"type":"worker.result","status":"failed","artifacts":["a"],"failure":{"kind":"test"},"usage":{"input_tokens":1}}`},
		{adapters.NewClaudeCode(), `{"type":"result","is_error":true,"api_error_status":500,"result":"x","usage":{"input_tokens":1}}`},
		{adapters.Codex{}, `{"type":"turn.failed","error":{"message":"unexpected status 500"}}`},
	} {
		dec := tc.a.NewDecoder()
		msgs, errs := lines(t, dec, tc.line)
		require.Empty(t, errs)
		want := dec.End(agent.ExitStatus{Known: true})
		got := msgs[len(msgs)-1].WorkerResult
		got.Failure.Kind = "mutated"
		got.Summary = "mutated"
		if got.Usage != nil {
			got.Usage.InputTokens = 99
		}
		require.Equal(t, want, dec.End(agent.ExitStatus{Known: true}))
		require.NotEqual(t, "mutated", want.Failure.Kind)
	}
}
