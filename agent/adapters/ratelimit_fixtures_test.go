package adapters_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
)

// The rate-limit transcripts: recorded from claude 2.1.332 and codex 0.171.0 against a
// scripted server on 127.0.0.1 answering with the unified rate-limit headers, 429s with
// retry-after and usage_limit_reached bodies (docs/agents.md, "Rate-limit windows"), plus two
// hand-written Claude Code transcripts of the shapes seen in the field that an API key
// cannot provoke (rate_limit_event, "You've hit your limit · resets …").

const tRate = agent.TypeRateLimit

func init() { fixtureCases = append(fixtureCases, rateLimitCases...) }

var (
	claudeRejected = "API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later."
	claudeRPM      = "API Error: Request rejected (429) · This request would exceed the rate limit for your organization of 50 requests per minute."
	codexHit       = "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at "
	codex429       = "exceeded retry limit, last status: 429 Too Many Requests"
	waits          = "; the profile waits for the window to reset"
	fieldReset     = time.Unix(1796140800, 0).UTC()
)

func claudeRate(api, text string) agent.WorkerResult {
	return failed(agent.KindRateLimit, claudeTool, "the model provider's rate limit was hit ("+api+"): "+text+waits, text, noUsage)
}

func codexRate(text string) agent.WorkerResult {
	return failed(agent.KindRateLimit, "codex", "the model provider's rate limit was hit: "+text+waits, text, nil)
}

// rateLimits returns the task.rate_limit bodies of msgs, in order.
func rateLimits(msgs []agent.Message) []agent.RateLimit {
	var out []agent.RateLimit
	for _, m := range msgs {
		if m.Type == tRate {
			out = append(out, *m.RateLimit)
		}
	}
	return out
}

var rateLimitCases = []fixtureCase{
	// 429 with anthropic-ratelimit-unified-status: rejected, -reset and retry-after, no retries:
	// Claude Code shows none of the headers; the reset is unknown.
	{file: "claude-ratelimit-rejected-429.ndjson", exit: exit1, types: seq(tLog, tLog, tRate, tLog, tResult),
		result: claudeRate("HTTP 429 rate_limit_error", claudeRejected),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, []agent.RateLimit{{Status: agent.RateRejected}}, rateLimits(msgs))
			require.Equal(t, "claude-code: rate-limit window rejected, reset time unknown", msgs[3].Message)
		}},
	// 429 + retry-after: 7 with two retries: each api_retry waits the retry-after (plus jitter).
	{file: "claude-ratelimit-429-retry-after.ndjson", exit: exit1,
		types:  seq(tLog, tLog, tRate, tLog, tLog, tRate, tLog, tLog, tRate, tLog, tResult),
		result: claudeRate("HTTP 429 rate_limit_error", claudeRPM),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, []agent.RateLimit{{Status: agent.RateRejected, RetryAfterSeconds: 7.855},
				{Status: agent.RateRejected, RetryAfterSeconds: 7.835}, {Status: agent.RateRejected}}, rateLimits(msgs))
		}},
	// 200 with anthropic-ratelimit-unified-status: allowed_warning: nothing in the stream.
	{file: "claude-ratelimit-allowed-warning.ndjson", usage: []agent.Usage{{InputTokens: 10, OutputTokens: 1}}, exit: exit0, types: seq(tLog, tProgress, tResult),
		result: completed("done", &agent.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.00014000000000000001})},
	// Hand-written, the field's shapes: allowed, allowed_warning with unknown members, three it
	// cannot read (no status, no info, an unknown status: counted), rejected, then the
	// exhausted-window result. The event's exact reset wins over the text's.
	{file: "claude-rate-limit-event-handwritten.ndjson", exit: exit1,
		types:  seq(tLog, tRate, tLog, tRate, tLog, tLog, tLog, tLog, tRate, tLog, tLog, tResult),
		result: claudeRate("HTTP 429 rate_limit_error", "You've hit your limit · resets 12am (Asia/Shanghai)"),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, []agent.RateLimit{
				{Status: agent.RateAllowed, ResetsAt: fieldReset, LimitType: "five_hour"},
				{Status: agent.RateWarning, ResetsAt: fieldReset, LimitType: "five_hour"},
				{Status: agent.RateRejected, ResetsAt: fieldReset, LimitType: "five_hour"},
			}, rateLimits(msgs))
			require.Equal(t, "a rate_limit_event with status \"\" (want allowed, allowed_warning or rejected) ignored (1 so far this attempt)", msgs[5].Message)
			require.Equal(t, "a rate_limit_event without a readable rate_limit_info object ignored (2 so far this attempt)", msgs[6].Message)
			require.Equal(t, "a rate_limit_event with status \"paused_for_maintenance\" (want allowed, allowed_warning or rejected) ignored (3 so far this attempt)", msgs[7].Message)
			require.Equal(t, "warn", msgs[7].Level)
		}},
	// Hand-written: the exhausted-window text alone (error usage_limit_reached, no status).
	{file: "claude-hit-limit-text-handwritten.ndjson", exit: exit1, types: seq(tLog, tLog, tRate, tLog, tResult),
		result: claudeRate("usage window exhausted", "You've hit your limit · resets 2pm (Asia/Shanghai)"),
		check: func(t *testing.T, msgs []agent.Message) {
			rl := rateLimits(msgs)
			require.Len(t, rl, 1)
			sh, err := time.LoadLocation("Asia/Shanghai")
			require.NoError(t, err)
			at := rl[0].ResetsAt.In(sh)
			require.Equal(t, [2]int{14, 0}, [2]int{at.Hour(), at.Minute()}, "2pm in the zone the text names")
			require.WithinDuration(t, time.Now().Add(12*time.Hour), at, 12*time.Hour+time.Minute, "its next occurrence")
		}},
	// usage_limit_reached body (resets_at 30 s ahead): the reset is in the text, to the minute,
	// in the zone Codex printed in (ours).
	{file: "codex-usage-limit-reached.jsonl", exit: exit1, types: seq(tLog, tProgress, tLog, tRate, tLog, tResult),
		result: codexRate(codexHit + "6:16 PM."),
		check: func(t *testing.T, msgs []agent.Message) {
			rl := rateLimits(msgs)
			require.Len(t, rl, 1)
			at := rl[0].ResetsAt.In(time.Local)
			require.Equal(t, [2]int{18, 16}, [2]int{at.Hour(), at.Minute()})
			require.WithinDuration(t, time.Now().Add(12*time.Hour), at, 12*time.Hour+time.Minute)
		}},
	{file: "codex-usage-limit-reached-tomorrow.jsonl", exit: exit1, types: seq(tLog, tProgress, tLog, tRate, tLog, tResult),
		result: codexRate(codexHit + "Dec 2nd, 2026 7:16 PM."),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, []agent.RateLimit{{Status: agent.RateRejected,
				ResetsAt: time.Date(2026, 12, 2, 19, 16, 0, 0, time.Local)}}, rateLimits(msgs))
		}},
	// A plain 429 with retry-after and x-ratelimit-* headers, one retry: no reset anywhere.
	{file: "codex-429-retry.jsonl", exit: exit1, types: seq(tLog, tProgress, tLog, tRate, tLog, tLog, tResult),
		result: codexRate(codex429),
		check: func(t *testing.T, msgs []agent.Message) {
			require.Equal(t, []agent.RateLimit{{Status: agent.RateRejected}}, rateLimits(msgs))
		}},
	// 200 with x-codex-primary-*/secondary-* headers at 92 %: nothing in exec --json.
	{file: "codex-ratelimit-headers.jsonl", usage: []agent.Usage{{InputTokens: 10, OutputTokens: 5}}, exit: exit0, types: seq(tLog, tProgress, tProgress, tResult),
		result: completed("done", &agent.Usage{InputTokens: 10, OutputTokens: 5})},
}

// A line where Claude Code wrote the event into the middle of another (a bug seen in the
// field) is not understood, and decoding goes on: the next event still counts.
func TestClaudeDecoder_RateLimitEventMidLine(t *testing.T) {
	dec := adapters.NewClaudeCode().NewDecoder()
	_, err := dec.Line([]byte(`{"type":"assistant","message":{"content":[{"type":"te{"type":"rate_limit_event","rate_limit_info":{"status":"rejected"}}`))
	require.Error(t, err)
	msgs, err := dec.Line([]byte(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":"1796140800"}}`))
	require.NoError(t, err)
	require.Equal(t, []agent.RateLimit{{Status: agent.RateRejected, ResetsAt: fieldReset}}, rateLimits(msgs))
}

// Our own protocol's task.rate_limit passes through the ndjson adapter; one it cannot act on
// is a line not understood (logged and counted by the runner), never fatal.
func TestNDJSONDecoder_RateLimit(t *testing.T) {
	dec := adapters.NDJSON{}.NewDecoder()
	msgs, err := dec.Line([]byte(`{"type":"task.rate_limit","rate_limit":{"status":"rejected","resets_at":"2026-12-01T16:00:00Z","limit_type":"five_hour","retry_after_seconds":30,"future":1}}`))
	require.NoError(t, err)
	require.Equal(t, []agent.Message{{Type: tRate, RateLimit: &agent.RateLimit{Status: agent.RateRejected, ResetsAt: fieldReset,
		LimitType: "five_hour", RetryAfterSeconds: 30}}}, msgs)
	for _, bad := range []string{`{"type":"task.rate_limit"}`, `{"type":"task.rate_limit","rate_limit":{"status":"maybe"}}`,
		`{"type":"task.rate_limit","rate_limit":{"status":"rejected","retry_after_seconds":-1}}`} {
		msgs, err := dec.Line([]byte(bad))
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "task.rate_limit", bad)
		require.Empty(t, msgs)
	}
}
