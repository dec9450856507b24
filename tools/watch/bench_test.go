package watch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// BenchmarkLoad measures what one refresh of the view reads — a Snapshot of 10 unfinished
// voyages of 20 missions each (a chain: every mission waits on the one before, so the
// waiting list is full from the voyages alone) and 60 missions outside voyages — against the
// reference measured in the same run: `status`'s read (tools.ReadStatus, counters only),
// which the view also does. It reports load-ms, status-ms and their ratio
// (docs/benchmarks.md).
//
//	go test ./tools/watch -run '^$' -bench BenchmarkLoad -benchtime 20x
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	e := newEngine(b)
	for v := range 10 {
		spec := engine.VoyageSpec{Title: fmt.Sprintf("voyage %d", v)}
		for i := range 20 {
			m := engine.MissionSpec{Key: fmt.Sprintf("m%d", i), Title: fmt.Sprintf("mission %d", i), WriteArea: []string{fmt.Sprintf("v%d/m%d.md", v, i)}}
			if i > 0 {
				m.DependsOn = []string{fmt.Sprintf("m%d", i-1)}
			}
			spec.Missions = append(spec.Missions, m)
		}
		_, err := e.Dispatch(ctx, spec, "bench")
		require.NoError(b, err)
	}
	for i := range 60 {
		_, err := e.CreateMission(ctx, engine.MissionSpec{Title: fmt.Sprintf("lone %d", i), WriteArea: []string{fmt.Sprintf("lone/%d.md", i)}}, "bench")
		require.NoError(b, err)
	}
	const refRuns = 50
	start := time.Now()
	for range refRuns {
		_, err := tools.ReadStatus(ctx, e)
		require.NoError(b, err)
	}
	status := time.Since(start) / refRuns
	s, err := Load(ctx, e)
	require.NoError(b, err)
	require.Len(b, s.Voyages, 10)
	require.Len(b, s.Waiting, MaxWaiting)
	b.ResetTimer()
	start = time.Now()
	for b.Loop() {
		if _, err := Load(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	load := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(load)/1e6, "load-ms")
	b.ReportMetric(float64(status)/1e6, "status-ms")
	b.ReportMetric(float64(load)/float64(status), "ratio")
}
