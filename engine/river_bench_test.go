package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage"
)

// BenchmarkAcquireCompleteVsRiver compares working off a queue of b.N items, each claimed and
// completed once, durably, on SQLite files with the same pragmas: the engine (Acquire with
// Start, then Complete, from riverWorkers goroutines; runnable rules, events, attempt rows)
// against River v0.51.2 with its SQLite driver (riverWorkers workers, a no-op Work, its
// fetch tuned down to 1 ms cooldown and 5 ms poll so that it is not waiting on its own
// timers). Both queues are filled before the timer starts. The engine sub-benchmark reports
// missions/s and its ratio to River's jobs/s of the same run (x_river, goal ≥ 2), the process
// CPU per item of both and its ratio (x_river_cpu: on a loaded machine the wall rate depends
// mostly on what else runs, the CPU per item much less), and the writer's mean group-commit
// batch (updates/commit). No speed is asserted.
//
//	go test -run '^$' -bench AcquireCompleteVsRiver -benchtime 2000x ./engine/
func BenchmarkAcquireCompleteVsRiver(b *testing.B) {
	b.Run("river", benchRiver)
	b.Run("engine", benchEngineQueue)
}

const riverWorkers = 8

var riverRate, riverCPU float64 // jobs/s and process CPU µs per job of the last River run

// processCPU is the CPU time (user + system) this process used so far. On a loaded machine
// the wall rate depends on what else runs; the CPU per item is the cost itself.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type noopArgs struct{}

func (noopArgs) Kind() string { return "noop" }

type noopWorker struct{ river.WorkerDefaults[noopArgs] }

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

func benchRiver(b *testing.B) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", rawDSN(b.TempDir()+"/river.db"))
	require.NoError(b, err)
	db.SetMaxOpenConns(1) // what riversqlite's documentation asks for
	b.Cleanup(func() { _ = db.Close() })
	driver := riversqlite.New(db)
	mig, err := rivermigrate.New(driver, nil)
	require.NoError(b, err)
	_, err = mig.Migrate(ctx, rivermigrate.DirectionUp, nil)
	require.NoError(b, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, noopWorker{})
	client, err := river.NewClient(driver, &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: riverWorkers}},
		Workers:           workers,
		FetchCooldown:     time.Millisecond,
		FetchPollInterval: 5 * time.Millisecond,
		Logger:            slog.New(slog.DiscardHandler),
	})
	require.NoError(b, err)
	params := make([]river.InsertManyParams, b.N)
	for i := range params {
		params[i] = river.InsertManyParams{Args: noopArgs{}}
	}
	for len(params) > 0 { // in chunks, one transaction each
		n := min(len(params), 500)
		_, err := client.InsertMany(ctx, params[:n])
		require.NoError(b, err)
		params = params[n:]
	}
	done, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	b.ResetTimer()
	cpu0 := processCPU()
	require.NoError(b, client.Start(ctx))
	for i := 0; i < b.N; i++ {
		ev := <-done
		if ev.Kind != river.EventKindJobCompleted {
			b.Fatalf("river job %d: %s", ev.Job.ID, ev.Kind)
		}
	}
	b.StopTimer()
	riverCPU = (processCPU() - cpu0).Seconds() * 1e6 / float64(b.N)
	stop, cancelStop := context.WithTimeout(ctx, time.Minute)
	defer cancelStop()
	require.NoError(b, client.Stop(stop))
	riverRate = float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(riverRate, "jobs/s")
	b.ReportMetric(riverCPU, "cpu-µs/job")
}

func benchEngineQueue(b *testing.B) {
	ctx := context.Background()
	path := b.TempDir() + "/engine.db"
	seedMissions(b, path, b.N, 0, true)
	st, e := benchEngine(b, path, storage.Options{})
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, riverWorkers)
	b.ResetTimer()
	cpu0 := processCPU()
	c0, u0 := st.WriteStats()
	for w := 0; w < riverWorkers; w++ {
		wg.Go(func() {
			for done.Load() < int64(b.N) {
				m, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: "bench", Start: true})
				if errors.Is(err, domain.ErrNoWork) {
					return
				}
				if err == nil {
					_, err = e.Complete(ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
				}
				if err != nil {
					errs <- err
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	cpu := (processCPU() - cpu0).Seconds() * 1e6 / float64(b.N)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	require.EqualValues(b, b.N, done.Load())
	rate := float64(b.N) / b.Elapsed().Seconds()
	if commits, updates := st.WriteStats(); commits > c0 {
		b.ReportMetric(float64(updates-u0)/float64(commits-c0), "updates/commit")
	}
	b.ReportMetric(rate, "missions/s")
	b.ReportMetric(cpu, "cpu-µs/mission")
	if riverRate > 0 {
		b.ReportMetric(rate/riverRate, "x_river")
	}
	if riverCPU > 0 {
		b.ReportMetric(riverCPU/cpu, "x_river_cpu")
	}
}
