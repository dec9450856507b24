package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage"
)

// seedFinished inserts n cancelled missions that finished at t0 - 60 days, each with five
// events, directly in one transaction (the benchmark measures the prune, not the history).
func seedFinished(tb testing.TB, path string, n int) {
	tb.Helper()
	st, err := storage.Open(context.Background(), path, storage.Options{})
	require.NoError(tb, err)
	require.NoError(tb, st.Close())
	db, err := sql.Open("sqlite", rawDSN(path))
	require.NoError(tb, err)
	defer db.Close()
	tx, err := db.Begin()
	require.NoError(tb, err)
	ins, err := tx.Prepare(`INSERT INTO missions (id, title, brief, repository, state, created_at, updated_at, finished_at)
 VALUES (?, 'old', 'old', '/repo', 'cancelled', ?, ?, ?)`)
	require.NoError(tb, err)
	ev, err := tx.Prepare(`INSERT INTO events (at, type, mission_id, data) VALUES (?, ?, ?, '{}')`)
	require.NoError(tb, err)
	at := t0.Add(-60 * 24 * time.Hour).UnixMilli()
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("msn_%026d", i)
		_, err := ins.Exec(id, at, at, at)
		require.NoError(tb, err)
		for _, typ := range []string{"mission.created", "lease.acquired", "mission.progress", "mission.progress", "mission.cancelled"} {
			_, err := ev.Exec(at, typ, id)
			require.NoError(tb, err)
		}
	}
	require.NoError(tb, tx.Commit())
}

// BenchmarkPruneHistory prunes 20,000 finished missions (100,000 events) in batches of 100
// while one goroutine creates missions as the scheduler and tools would, and reports the
// creates' latency during the prune against the same creates measured just before it, on
// the same store (reference). The prune's cost to the scheduler is the latency ratio.
//
//	go test -run '^$' -bench PruneHistory -benchtime 1x ./engine/
func BenchmarkPruneHistory(b *testing.B) {
	for range b.N {
		path := b.TempDir() + "/prune.db"
		const n = 20000
		seedFinished(b, path, n)
		_, e := benchEngine(b, path, storage.Options{})
		ctx := context.Background()
		before := createLatencies(b, e, 200, nil)
		var rep engine.PruneReport
		var took time.Duration
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			defer close(done)
			start := time.Now()
			var err error
			rep, err = e.PruneHistory(ctx, engine.PruneOptions{Before: t0.Add(-30 * 24 * time.Hour), Batch: 100})
			took = time.Since(start)
			require.NoError(b, err)
		})
		during := createLatencies(b, e, 0, done)
		wg.Wait()
		require.Equal(b, n, rep.Removed.Missions)
		b.ReportMetric(float64(rep.Batches), "batches")
		b.ReportMetric(float64(took.Milliseconds())/float64(rep.Batches), "ms/batch")
		b.ReportMetric(float64(n)/took.Seconds(), "missions_pruned/s")
		p := func(l []time.Duration, q float64) float64 {
			return float64(l[int(q*float64(len(l)-1))].Microseconds()) / 1000
		}
		b.ReportMetric(p(before, 0.5), "create_p50_ms_idle")
		b.ReportMetric(p(during, 0.5), "create_p50_ms_pruning")
		b.ReportMetric(p(before, 0.99), "create_p99_ms_idle")
		b.ReportMetric(p(during, 0.99), "create_p99_ms_pruning")
		b.ReportMetric(p(during, 1), "create_max_ms_pruning")
		b.ReportMetric(p(during, 0.99)/p(before, 0.99), "x_p99")
	}
}

// createLatencies creates missions one after another, n of them, or until stop closes, and
// returns their latencies sorted.
func createLatencies(b *testing.B, e *engine.Engine, n int, stop <-chan struct{}) []time.Duration {
	var out []time.Duration
	for i := 0; n == 0 || i < n; i++ {
		if stop != nil {
			select {
			case <-stop:
				slices.Sort(out)
				return out
			default:
			}
		}
		start := time.Now()
		_, err := e.CreateMission(context.Background(), engine.MissionSpec{Title: "new", WriteArea: []string{fmt.Sprintf("n%d/**", len(out))}}, "bench")
		require.NoError(b, err)
		out = append(out, time.Since(start))
	}
	slices.Sort(out)
	return out
}
