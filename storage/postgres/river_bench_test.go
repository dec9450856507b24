package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// BenchmarkAcquireCompleteVsRiverPG compares working off a queue of b.N items, each claimed
// and completed once, durably, on one PostgreSQL server (pgtest's cluster, or the server
// MCP_SCHEDULER_TEST_DATABASE_URL names), with 1, 2 and 3 nodes sharing pgWorkers workers:
// the engine (Acquire with Start, then Complete; runnable rules, events, attempt rows; each
// node its own Store, pool and Engine on the same database) against River v0.51.2 with
// riverpgxv5 (each node its own pool and Client, a no-op Work, fetch tuned down to 1 ms
// cooldown and 5 ms poll as in the SQLite benchmark). Both queues are filled before the timer
// starts. Each sub-benchmark reports items/s, the CPU per item of this process and of the
// server (cpu-µs/item, pg-cpu-µs/item) and the load average; the engine's also report x_river
// (its rate over River's with as many nodes, same run) and x_river1 (over River's with one
// node). Every run checks in the database that each item completed exactly once, or fails.
// No speed is asserted.
//
//	go test -run '^$' -bench AcquireCompleteVsRiverPG -benchtime 2000x ./storage/postgres/
func BenchmarkAcquireCompleteVsRiverPG(b *testing.B) {
	b.Run("river", func(b *testing.B) {
		for nodes := 1; nodes <= 3; nodes++ {
			b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) { benchRiverPG(b, nodes) })
		}
	})
	b.Run("engine", func(b *testing.B) {
		b.Run("nodes=1,workers=1", func(b *testing.B) { benchEnginePG(b, 1, 1) })
		for nodes := 1; nodes <= 3; nodes++ {
			b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) { benchEnginePG(b, nodes, pgWorkers) })
		}
	})
}

// pgWorkers is the number of workers of every run, split across its nodes.
const pgWorkers = 8

// riverPGRate is River's jobs/s of the last run with that many nodes, for the ratios.
var riverPGRate = map[int]float64{}

// workersOf is node i's share of workers among nodes (8 on 3 nodes: 3, 3, 2).
func workersOf(i, nodes, workers int) int {
	n := workers / nodes
	if i < workers%nodes {
		n++
	}
	return n
}

type noopArgs struct{}

func (noopArgs) Kind() string { return "noop" }

type noopWorker struct{ river.WorkerDefaults[noopArgs] }

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

// riverPool opens a pool of its own on url, closed when tb ends.
func riverPool(tb testing.TB, url string) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(tb, err)
	tb.Cleanup(pool.Close)
	return pool
}

// migrateRiver creates River's schema on the database pool reaches.
func migrateRiver(tb testing.TB, pool *pgxpool.Pool) {
	tb.Helper()
	mig, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	require.NoError(tb, err)
	_, err = mig.Migrate(context.Background(), rivermigrate.DirectionUp, nil)
	require.NoError(tb, err)
}

// riverClient makes a River client on pool working the default queue with workers workers
// (0: insert only), its fetch tuned by cooldown and poll.
func riverClient(tb testing.TB, pool *pgxpool.Pool, workers int, w *river.Workers, cooldown, poll time.Duration) *river.Client[pgx.Tx] {
	tb.Helper()
	cfg := &river.Config{FetchCooldown: cooldown, FetchPollInterval: poll, Logger: slog.New(slog.DiscardHandler)}
	if workers > 0 {
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}}
		cfg.Workers = w
	}
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	require.NoError(tb, err)
	return client
}

func benchRiverPG(b *testing.B, nodes int) {
	ctx := context.Background()
	url := pgtest.Database(b)
	workers := river.NewWorkers()
	river.AddWorker(workers, noopWorker{})
	clients := make([]*river.Client[pgx.Tx], nodes)
	for i := range clients {
		pool := riverPool(b, url)
		if i == 0 {
			migrateRiver(b, pool)
		}
		clients[i] = riverClient(b, pool, workersOf(i, nodes, pgWorkers), workers, time.Millisecond, 5*time.Millisecond)
	}
	insertRiverJobs(b, clients[0], b.N)
	analyze(b, url)
	events := make(chan *river.Event, b.N)
	for _, c := range clients {
		sub, cancel := c.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
		b.Cleanup(cancel)
		go func() {
			for ev := range sub {
				events <- ev
			}
		}()
	}
	srv := startServerCPU(b, url)
	b.ResetTimer()
	cpu0 := processCPU()
	for _, c := range clients {
		require.NoError(b, c.Start(ctx))
	}
	for i := 0; i < b.N; i++ {
		if ev := <-events; ev.Kind != river.EventKindJobCompleted {
			b.Fatalf("river job %d: %s", ev.Job.ID, ev.Kind)
		}
	}
	b.StopTimer()
	cpu, pgCPU := processCPU()-cpu0, srv.since(b)
	stopRiver(b, clients)
	require.EqualValues(b, b.N, countRows(b, url, "SELECT count(*) FROM river_job WHERE state = 'completed' AND attempt = 1"),
		"every River job completed exactly once, on its first attempt")
	rate := float64(b.N) / b.Elapsed().Seconds()
	riverPGRate[nodes] = rate
	reportItems(b, rate, cpu, pgCPU)
}

// analyze runs ANALYZE on url's database after the queue is filled, for both contenders:
// the statistics autovacuum would have within its naptime (a minute). Without it the
// engine's acquire, planned as a generic plan on the statistics of an empty table, walks and
// sorts every pending mission (docs/benchmarks.md, "PostgreSQL").
func analyze(tb testing.TB, url string) {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(tb, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "ANALYZE")
	require.NoError(tb, err)
}

// insertRiverJobs inserts n no-op jobs through client, 500 to a transaction.
func insertRiverJobs(tb testing.TB, client *river.Client[pgx.Tx], n int) {
	tb.Helper()
	params := make([]river.InsertManyParams, n)
	for i := range params {
		params[i] = river.InsertManyParams{Args: noopArgs{}}
	}
	for len(params) > 0 {
		k := min(len(params), 500)
		_, err := client.InsertMany(context.Background(), params[:k])
		require.NoError(tb, err)
		params = params[k:]
	}
}

// stopRiver stops every client, waiting up to a minute for each.
func stopRiver(tb testing.TB, clients []*river.Client[pgx.Tx]) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range clients {
		require.NoError(tb, c.Stop(ctx))
	}
}

// reportItems reports the rate, the CPU per item of this process and of the server, and the
// load average.
func reportItems(b *testing.B, rate float64, cpu, pgCPU time.Duration) {
	b.ReportMetric(rate, "items/s")
	b.ReportMetric(cpu.Seconds()*1e6/float64(b.N), "cpu-µs/item")
	b.ReportMetric(pgCPU.Seconds()*1e6/float64(b.N), "pg-cpu-µs/item")
	b.ReportMetric(loadAvg(), "load1")
}

func benchEnginePG(b *testing.B, nodes, workers int) {
	url := pgtest.Database(b)
	ns := openBenchNodes(b, url, nodes, engine.NewFakeClock(benchT0.Add(time.Hour)))
	seedBenchMissions(b, ns[0].st, b.N)
	analyze(b, url)
	q := &benchQueue{n: int64(b.N), errs: make(chan error, workers)}
	var wg sync.WaitGroup
	srv := startServerCPU(b, url)
	b.ResetTimer()
	cpu0 := processCPU()
	for i, n := range ns {
		for range workersOf(i, nodes, workers) {
			wg.Go(func() { q.work(n.e) })
		}
	}
	wg.Wait()
	b.StopTimer()
	cpu, pgCPU := processCPU()-cpu0, srv.since(b)
	close(q.errs)
	for err := range q.errs {
		b.Fatal(err)
	}
	require.EqualValues(b, b.N, q.done.Load())
	requireCompletedOnce(b, url, b.N)
	rate := float64(b.N) / b.Elapsed().Seconds()
	reportItems(b, rate, cpu, pgCPU)
	var retries int64
	for _, n := range ns {
		retries += n.st.SerialRetries()
	}
	b.ReportMetric(float64(retries)/float64(b.N), "retries/item")
	b.ReportMetric(float64(q.gaveUp.Load())/float64(b.N), "gaveup/item")
	if workers != pgWorkers {
		return
	}
	if r := riverPGRate[nodes]; r > 0 {
		b.ReportMetric(rate/r, "x_river")
	}
	if r := riverPGRate[1]; r > 0 {
		b.ReportMetric(rate/r, "x_river1")
	}
}

// benchQueue is the engine's side of a run: n missions to acquire (and start) and complete.
// A call the store gave up on after its serialization retries (still 40001 or 40P01) is
// counted in gaveUp and made again, as an agent would claim or complete again; any other
// error goes to errs and stops its worker.
type benchQueue struct {
	n      int64
	done   atomic.Int64
	gaveUp atomic.Int64
	errs   chan error
}

// work acquires and completes missions on e until n are done or none is left.
func (q *benchQueue) work(e *engine.Engine) {
	ctx := context.Background()
	for q.done.Load() < q.n {
		var m domain.Mission
		err := q.again(func() (err error) {
			m, err = e.Acquire(ctx, engine.AcquireRequest{AgentID: "bench", Start: true})
			return err
		})
		if errors.Is(err, domain.ErrNoWork) {
			return
		}
		if err == nil {
			err = q.again(func() error {
				_, err := e.Complete(ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
				return err
			})
		}
		if err != nil {
			q.errs <- err
			return
		}
		q.done.Add(1)
	}
}

// again runs call until it ends other than by a serialization failure the store gave up on.
func (q *benchQueue) again(call func() error) error {
	for {
		err := call()
		var pg *pgconn.PgError
		if !errors.As(err, &pg) || (pg.Code != "40001" && pg.Code != "40P01") {
			return err
		}
		q.gaveUp.Add(1)
	}
}

// requireCompletedOnce checks in the database that each of the n missions completed, once:
// n completed missions, n completed attempts (one per mission, the first) and n
// mission.completed events of n distinct missions.
func requireCompletedOnce(tb testing.TB, url string, n int) {
	tb.Helper()
	require.EqualValues(tb, n, countRows(tb, url, "SELECT count(*) FROM missions WHERE state = 'completed' AND attempt = 1"),
		"completed missions, each on its first attempt")
	require.EqualValues(tb, n, countRows(tb, url, "SELECT count(*) FROM attempts WHERE outcome = 'completed'"), "completed attempts")
	require.EqualValues(tb, n, countRows(tb, url, "SELECT count(*) FROM events WHERE type = 'mission.completed'"), "mission.completed events")
	require.EqualValues(tb, n, countRows(tb, url, "SELECT count(DISTINCT mission_id) FROM events WHERE type = 'mission.completed'"),
		"missions with a mission.completed event")
}
