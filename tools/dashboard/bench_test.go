package dashboard_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// BenchmarkChangeToSSE measures the delay from a state change (an engine operation on a real
// SQLite store, as a tool call makes it) to the dashboard's "change" event reaching an HTTP
// client of /api/events on loopback. The reference, measured in the same run, is the
// operation itself (commit and hub publish: the earliest anything can learn of the change),
// so sse/op says what the dashboard's stream adds. Reported: p50 and p95 of both, in ms.
func BenchmarkChangeToSSE(b *testing.B) {
	f := start(b, "")
	d := f.voyage()
	id := d.IDs["a"]
	ev := openEvents(b, f)
	require.Equal(b, "ready", ev.next(b).name)
	var ops, sses []time.Duration
	b.ResetTimer()
	for i := range b.N {
		p := i % 100
		t0 := time.Now()
		_, err := f.eng.UpdateMission(f.ctx, id, engine.MissionPatch{Priority: &p}, "bench")
		require.NoError(b, err)
		ops = append(ops, time.Since(t0))
		for !names(b, ev.next(b), id) {
		}
		sses = append(sses, time.Since(t0))
	}
	b.StopTimer()
	op50, op95 := pct(ops, 50), pct(ops, 95)
	sse50, sse95 := pct(sses, 50), pct(sses, 95)
	b.ReportMetric(ms(op50), "op-p50-ms")
	b.ReportMetric(ms(op95), "op-p95-ms")
	b.ReportMetric(ms(sse50), "sse-p50-ms")
	b.ReportMetric(ms(sse95), "sse-p95-ms")
	b.ReportMetric(float64(sse50)/float64(op50), "sse/op-p50")
}

// names reports whether e is a change event naming mission id.
func names(t testing.TB, e sseEvent, id string) bool {
	if e.name != "change" {
		return false
	}
	var ce dashboard.ChangeEvent
	require.NoError(t, json.Unmarshal([]byte(e.data), &ce))
	return ce.Overflow || slices.ContainsFunc(ce.Changes, func(c dashboard.ChangeItem) bool { return c.MissionID == id })
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
