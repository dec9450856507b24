package adapters_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
)

// On the recorded transcript, turn.completed gives the turn's spend as a task.usage line on
// the wire, byte for byte, immediately before the worker.result it belongs to (so the
// scheduler checks the budgets before it reads the result), and that report round-trips
// through the protocol's own decoder as the same usage.
func TestCodexUsage_TurnCompletedReportsBeforeTheResult(t *testing.T) {
	_, msgs := decodeFile(t, adapterFor(t, "codex-exec.jsonl"), filepath.Join("testdata", "codex-exec.jsonl"))
	require.GreaterOrEqual(t, len(msgs), 2)
	usage, result := msgs[len(msgs)-2], msgs[len(msgs)-1]
	require.Equal(t, agent.TypeResult, result.Type)
	wire, err := json.Marshal(usage)
	require.NoError(t, err)
	require.Equal(t, `{"type":"task.usage","usage":{"input_tokens":200,"output_tokens":40}}`, string(wire))
	back, err := adapters.NDJSON{}.NewDecoder().Line(wire)
	require.NoError(t, err)
	require.Len(t, back, 1)
	got, ok := back[0].ReportedUsage()
	require.True(t, ok)
	require.Equal(t, *result.WorkerResult.Usage, got, "the report and the result agree on a one-turn run")
	require.Len(t, reported(msgs), 1, "one report per turn.completed")
}

// Cached input is part of input (never more than it) and a negative count is noise: the
// report passes the protocol's own check. A turn.completed without usage reports nothing, and
// turn.failed reports nothing either (Codex gives no usage there).
func TestCodexUsage_CachedAndOddCounts(t *testing.T) {
	msgs, errs := lines(t, adapters.Codex{}.NewDecoder(),
		`{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":5000,"output_tokens":-3,"reasoning_output_tokens":7}}`)
	require.Empty(t, errs)
	require.Equal(t, []agent.Usage{{InputTokens: 1000, CacheReadTokens: 1000}}, reported(msgs))
	require.NoError(t, reported(msgs)[0].Check())

	msgs, errs = lines(t, adapters.Codex{}.NewDecoder(), `{"type":"turn.completed"}`)
	require.Empty(t, errs)
	require.Empty(t, reported(msgs))
	require.Equal(t, agent.TypeResult, msgs[len(msgs)-1].Type)

	msgs, errs = lines(t, adapters.Codex{}.NewDecoder(), `{"type":"turn.failed","error":{"message":"boom"}}`)
	require.Empty(t, errs)
	require.Empty(t, reported(msgs))
}
