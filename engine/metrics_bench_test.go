package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/storage"
)

// seedMetricsHistory stores a history of finished missions (completed and landed; every
// hundredth one with a resolved escalation) and the same live work whatever the history:
// 100 pending missions (50 of them held), 10 running ones of two profiles, 20 completed
// ones waiting to land, 5 waiting for approval and 3 open escalations. Raw inserts in one
// transaction (the counters' triggers run as for the engine's own writes): the benchmark
// measures the read, not the seeding.
func seedMetricsHistory(tb testing.TB, path string, history int) {
	tb.Helper()
	st, err := storage.Open(context.Background(), path, storage.Options{})
	require.NoError(tb, err)
	require.NoError(tb, st.Close())
	db, err := sql.Open("sqlite", rawDSN(path))
	require.NoError(tb, err)
	defer db.Close()
	tx, err := db.Begin()
	require.NoError(tb, err)
	ins, err := tx.Prepare(`INSERT INTO missions (id, title, brief, repository, state, landing, profile, epoch, attempt,
 lease_owner, lease_expires_at, created_at, updated_at, finished_at) VALUES (?, 'm', 'm', '/repo', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	require.NoError(tb, err)
	esc, err := tx.Prepare(`INSERT INTO escalations (id, route, kind, reason, decision_required, state, created_at, resolved_at)
 VALUES (?, 'person', 'decision', 'r', 'd', ?, ?, ?)`)
	require.NoError(tb, err)
	hold, err := tx.Prepare(`INSERT INTO holds (mission_id, code, message, since, updated_at) VALUES (?, 'conflict', 'held', ?, ?)`)
	require.NoError(tb, err)
	at := t0.UnixMilli()
	n := 0
	add := func(state, landing, profile string, epoch int, finished any) string {
		n++
		id := fmt.Sprintf("msn_%026d", n)
		var owner, expires any
		if epoch > 0 {
			owner, expires = profile, at+60_000
		}
		_, err := ins.Exec(id, state, landing, profile, epoch, epoch, owner, expires, at, at, finished)
		require.NoError(tb, err)
		return id
	}
	for i := range history {
		add("completed", "landed", "claude", 1, at)
		if i%100 == 0 {
			_, err := esc.Exec(fmt.Sprintf("esc_%026d", i), "resolved", at, at)
			require.NoError(tb, err)
		}
	}
	for i := range 100 {
		id := add("pending", "none", "", 0, nil)
		if i%2 == 0 {
			_, err := hold.Exec(id, at, at)
			require.NoError(tb, err)
		}
	}
	for i := range 10 {
		add("running", "none", []string{"claude", "codex"}[i%2], 1, nil)
	}
	for range 20 {
		add("completed", "pending", "claude", 1, at)
	}
	for range 5 {
		add("completed", "approval", "claude", 1, at)
	}
	for i := range 3 {
		_, err := esc.Exec(fmt.Sprintf("esc_open_%d", i), "open", at, nil)
		require.NoError(tb, err)
	}
	require.NoError(tb, tx.Commit())
}

// BenchmarkMetricCounts reads a metrics scrape's counts (Engine.MetricCounts, one statement)
// with the same live work over a history of 1,000 and of 1,000,000 finished missions, and,
// as the reference on the same store, the count a naive implementation would make (SELECT
// state, count(*) FROM missions GROUP BY state, which reads every row). The scrape's cost
// follows the live work: µs/scrape stays flat while the reference grows with the history.
//
//	go test -run '^$' -bench MetricCounts -benchtime 200x -timeout 60m ./engine/
func BenchmarkMetricCounts(b *testing.B) {
	for _, history := range []int{1_000, 1_000_000} {
		path := fmt.Sprintf("%s/metrics-%d.db", b.TempDir(), history)
		seedMetricsHistory(b, path, history) // once: b.Run calls the function again for each b.N
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			_, e := benchEngine(b, path, storage.Options{})
			ctx := context.Background()
			c, err := e.MetricCounts(ctx)
			require.NoError(b, err)
			require.Equal(b, history+25, c.Missions["completed"])
			require.Equal(b, 50, c.Holds["conflict"])
			require.Equal(b, 20, c.Landings["pending"])
			require.Equal(b, 3, c.OpenEscalations)
			require.Equal(b, map[string]int{"claude": 5, "codex": 5}, c.Live)
			ref := naiveCountLatency(b, path)
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				if _, err := e.MetricCounts(ctx); err != nil {
					b.Fatal(err)
				}
			}
			per := time.Since(start) / time.Duration(b.N)
			b.StopTimer()
			b.ReportMetric(float64(per.Microseconds()), "µs/scrape")
			b.ReportMetric(float64(ref.Microseconds()), "µs/naive_count")
			b.ReportMetric(float64(ref)/float64(per), "x_naive/scrape")
		})
	}
}

// naiveCountLatency is the reference: counting missions per state by reading the rows, the
// mean of a few runs on the same file.
func naiveCountLatency(b *testing.B, path string) time.Duration {
	b.Helper()
	db, err := sql.Open("sqlite", rawDSN(path))
	require.NoError(b, err)
	defer db.Close()
	const runs = 5
	start := time.Now()
	for range runs {
		rows, err := db.Query(`SELECT state, count(*) FROM missions GROUP BY state`)
		require.NoError(b, err)
		for rows.Next() {
		}
		require.NoError(b, rows.Err())
		require.NoError(b, rows.Close())
	}
	return time.Since(start) / runs
}
