package adapters_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
)

// reported is the task.usage reports among msgs.
func reported(msgs []agent.Message) []agent.Usage {
	var out []agent.Usage
	for _, m := range msgs {
		if u, ok := m.ReportedUsage(); ok {
			out = append(out, u)
		}
	}
	return out
}

// Claude Code repeats a message's usage on each of its content-block events: each message id
// counts once (its largest counts), cache reads and writes are kept apart and inside input,
// synthetic messages and events without an id or usage count nothing, and a report is sent
// only when the total changed.
func TestClaudeUsage_CountsEachMessageOnce(t *testing.T) {
	dec := adapters.ClaudeCode{}.NewDecoder()
	msgs, errs := lines(t, dec,
		`{"type":"assistant","message":{"id":"msg_a","model":"m","content":[{"type":"text","text":"one"}],"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":1}}}`,
		`{"type":"assistant","message":{"id":"msg_a","model":"m","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":1}}}`,
		`{"type":"assistant","message":{"id":"msg_a","model":"m","content":[{"type":"text","text":"later block"}],"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":30}}}`,
		`{"type":"assistant","message":{"model":"m","content":[{"type":"text","text":"no id"}],"usage":{"input_tokens":999}}}`,
		`{"type":"assistant","message":{"id":"msg_b","model":"m","content":[{"type":"text","text":"no usage"}]}}`,
		`{"type":"assistant","message":{"id":"msg_s","model":"<synthetic>","content":[{"type":"text","text":"made up"}],"usage":{"input_tokens":5000}}}`,
		`{"type":"assistant","message":{"id":"msg_c","model":"m","content":[{"type":"text","text":"two"}],"usage":{"input_tokens":20,"cache_read_input_tokens":1110,"output_tokens":2,"unknown":{"x":1}}}}`,
		`{"type":"assistant","message":{"id":"msg_d","model":"m","content":[{"type":"text","text":"bad"}],"usage":{"input_tokens":-7,"output_tokens":3}}}`,
	)
	require.Empty(t, errs)
	require.Equal(t, []agent.Usage{
		{InputTokens: 1110, OutputTokens: 1, CacheReadTokens: 1000, CacheWriteTokens: 100},
		{InputTokens: 1110, OutputTokens: 30, CacheReadTokens: 1000, CacheWriteTokens: 100},
		{InputTokens: 2240, OutputTokens: 32, CacheReadTokens: 2110, CacheWriteTokens: 100},
		{InputTokens: 2240, OutputTokens: 35, CacheReadTokens: 2110, CacheWriteTokens: 100},
	}, reported(msgs))
	for _, u := range reported(msgs) {
		require.NoError(t, u.Check())
	}
}

// An NDJSON agent may send task.usage itself: a valid one passes through with nothing but its
// usage; one without usage or with a count out of range is a bad line naming the field.
func TestNDJSONDecoder_TaskUsage(t *testing.T) {
	dec := adapters.NDJSON{}.NewDecoder()
	msgs, errs := lines(t, dec,
		`{"type":"task.usage","usage":{"input_tokens":1200,"output_tokens":340,"cache_read_tokens":1000,"cost_usd":0.01},"message":"ignored","extra":1}`,
		`{"type":"task.usage"}`,
		`{"type":"task.usage","usage":{"input_tokens":-1}}`,
		`{"type":"task.usage","usage":{"input_tokens":10,"cache_read_tokens":20}}`,
		`{"type":"task.usage","usage":{"cost_usd":-0.5}}`,
	)
	require.Equal(t, []agent.Message{agent.UsageMessage(agent.Usage{InputTokens: 1200, OutputTokens: 340, CacheReadTokens: 1000, CostUSD: 0.01})}, msgs)
	require.Len(t, errs, 4)
	require.ErrorContains(t, errs[0], `without a "usage" object`)
	require.ErrorContains(t, errs[1], "usage.input_tokens is -1")
	require.ErrorContains(t, errs[2], "exceed input_tokens")
	require.ErrorContains(t, errs[3], "usage.cost_usd is -0.5")
	res := dec.End(agent.ExitStatus{Known: true, Code: 0})
	require.Equal(t, agent.StatusFailed, res.Status, "task.usage is no result")
}
