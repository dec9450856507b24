package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// BenchmarkPreflightRead measures what preflight (preflight.go) adds to a request it lets
// through: resources/read of mission://{id} and prompts/get of agent_brief for an existing
// mission, answered by mcp-go (HandleMessage) with and without preflight first, interleaved
// in the same run on one server over a real SQLite file. It reports the p50 of each and the
// ratio with/without.
//
//	go test -run '^$' -bench PreflightRead -benchtime 2000x ./tools/
func BenchmarkPreflightRead(b *testing.B) {
	ctx := context.Background()
	st, err := teststore.Open(ctx, teststore.Location(b))
	require.NoError(b, err)
	defer st.Close()
	srv, err := New(Deps{Engine: engine.New(st, engine.Options{DefaultRepository: b.TempDir()})}, Options{})
	require.NoError(b, err)
	created := srv.mcp.HandleMessage(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"bench"}}}`))
	raw, err := json.Marshal(created)
	require.NoError(b, err)
	var res struct {
		Result struct {
			Structured struct {
				Mission struct {
					ID string `json:"id"`
				} `json:"mission"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	require.NoError(b, json.Unmarshal(raw, &res), string(raw))
	id := res.Result.Structured.Mission.ID
	require.NotEmpty(b, id, string(raw))
	for _, c := range []struct{ name, method, params string }{
		{"resource", "resources/read", fmt.Sprintf(`{"uri":"mission://%s"}`, id)},
		{"prompt", "prompts/get", fmt.Sprintf(`{"name":"agent_brief","arguments":{"mission_id":%q}}`, id)},
	} {
		msg := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":%q,"params":%s}`, c.method, c.params))
		head, p := inspectMessage(msg)
		require.Nil(b, p)
		once := func(pre bool) time.Duration {
			start := time.Now()
			if pre {
				require.Nil(b, srv.preflight(ctx, head, msg, false))
			}
			out := srv.mcp.HandleMessage(ctx, msg)
			d := time.Since(start)
			if _, isErr := out.(mcp.JSONRPCError); isErr {
				b.Fatalf("%s: %v", c.name, out)
			}
			return d
		}
		with, without := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
		for range b.N {
			with = append(with, once(true))
			without = append(without, once(false))
		}
		wp, np := percentile(with, 50), percentile(without, 50)
		b.ReportMetric(float64(wp.Microseconds()), c.name+"_with_p50_µs")
		b.ReportMetric(float64(np.Microseconds()), c.name+"_without_p50_µs")
		b.ReportMetric(float64(wp)/float64(np), c.name+"_ratio_p50")
		b.Logf("%s, %d each: with preflight p50 %v, without %v, ratio %.2f", c.name, b.N, wp, np, float64(wp)/float64(np))
	}
}
