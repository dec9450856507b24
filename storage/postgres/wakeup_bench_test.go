package postgres_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// BenchmarkWakeupAcrossNodesPG measures, over b.N samples, how long work created on one node
// takes to be claimed by a waiter on another, on one PostgreSQL server. Engine: node A
// creates a mission (CreateMission); node B's waiter sits in the claim's wait for work
// (BeginClaim with a wait), woken by B's LISTEN connection (Store.Changes through
// WatchExternal), and takes it; a sample is from just before the create to the moment
// BeginClaim returns it. River v0.51.2 (riverpgxv5): an insert-only client on its own pool
// inserts a job; a client on another pool with one worker, its fetch woken by River's
// LISTEN/NOTIFY on inserts, starts it; a sample is from just before the insert to the start
// of Work. River runs twice, tuned as a user wanting low latency would: FetchCooldown 1 ms
// (its minimum) with the default 1 s FetchPollInterval (river/listen: the wake-up is the
// notification), and with a 5 ms poll as well (river/poll=5ms). Before each sample the
// creator waits until the waiter is idle, then a random 5–15 ms, so that the waiter is
// parked in its wait (a sample taken before it parked measures a plain acquire instead:
// shorter, never longer). Each sub-benchmark reports p50 and p99 in ms and the load
// average; the engine's also x_river_p50 and x_river_p99 (river/listen's figure over the
// engine's, same run: above 1 the engine wakes sooner). Every sample checks that the item
// claimed is the one just created. No speed is asserted.
//
//	go test -run '^$' -bench WakeupAcrossNodesPG -benchtime 500x ./storage/postgres/
func BenchmarkWakeupAcrossNodesPG(b *testing.B) {
	b.Run("river/listen", func(b *testing.B) { benchRiverWakeup(b, time.Second, true) })
	b.Run("river/poll=5ms", func(b *testing.B) { benchRiverWakeup(b, 5*time.Millisecond, false) })
	b.Run("engine", benchEngineWakeup)
}

// riverWake is river/listen's p50 and p99 of the last run, for the engine's ratios.
var riverWake struct{ p50, p99 time.Duration }

// sampleGap is the pause before a sample, once the waiter is idle: 5–15 ms.
func sampleGap() time.Duration { return 5*time.Millisecond + rand.N(10*time.Millisecond) }

// percentile returns the q-quantile (0 < q ≤ 1) of sorted lat: the smallest sample at or
// above which a fraction q lies.
func percentile(sorted []time.Duration, q float64) time.Duration {
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// reportWakeup sorts lat and reports its p50, p99 (ms) and the load average; it returns
// both.
func reportWakeup(b *testing.B, lat []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(lat)
	p50, p99 = percentile(lat, 0.50), percentile(lat, 0.99)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(loadAvg(), "load1")
	return p50, p99
}

type wakeArgs struct{}

func (wakeArgs) Kind() string { return "wake" }

// wakeWorker sends the job's id and the time its Work started.
type wakeWorker struct {
	river.WorkerDefaults[wakeArgs]
	started chan<- wakeStart
}

type wakeStart struct {
	id int64
	at time.Time
}

func (w wakeWorker) Work(_ context.Context, j *river.Job[wakeArgs]) error {
	w.started <- wakeStart{id: j.ID, at: time.Now()}
	return nil
}

func benchRiverWakeup(b *testing.B, poll time.Duration, listen bool) {
	ctx := context.Background()
	url := pgtest.Database(b)
	started := make(chan wakeStart, 1)
	workers := river.NewWorkers()
	river.AddWorker(workers, wakeWorker{started: started})
	inPool := riverPool(b, url)
	migrateRiver(b, inPool)
	inserter := riverClient(b, inPool, 0, nil, time.Millisecond, poll)
	worker := riverClient(b, riverPool(b, url), 1, workers, time.Millisecond, poll)
	require.NoError(b, worker.Start(ctx))
	b.Cleanup(func() { stopRiver(b, []*river.Client[pgx.Tx]{worker}) })
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		time.Sleep(sampleGap())
		t0 := time.Now()
		res, err := inserter.Insert(ctx, wakeArgs{}, nil)
		require.NoError(b, err)
		s := <-started
		require.Equal(b, res.Job.ID, s.id, "the job started is the one just inserted")
		lat = append(lat, s.at.Sub(t0))
	}
	b.StopTimer()
	p50, p99 := reportWakeup(b, lat)
	if listen {
		riverWake.p50, riverWake.p99 = p50, p99
	}
}

// claimed is one claim of the engine's waiter: the mission and when BeginClaim returned it.
type claimed struct {
	id  string
	at  time.Time
	err error
}

func benchEngineWakeup(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nodes := openBenchNodes(b, pgtest.Database(b), 2, nil)
	creator, waiter := nodes[0].e, nodes[1].e
	go func() { _ = waiter.WatchExternal(ctx, 0) }()
	signals := watchHub(ctx, waiter.Hub())
	idle, got := make(chan struct{}, 1), make(chan claimed, 1)
	go claimLoop(ctx, waiter, idle, got)
	var lat, created, notified []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		select {
		case <-idle:
		case s := <-got: // the waiter failed after its last claim
			require.NoError(b, s.err)
		}
		time.Sleep(sampleGap())
		drain(signals)
		t0 := time.Now()
		c, err := creator.CreateMission(ctx, engine.MissionSpec{Title: "wake", Brief: "wake"}, "bench")
		created = append(created, time.Since(t0))
		require.NoError(b, err)
		s := <-got
		require.NoError(b, s.err)
		require.Equal(b, c.Mission.ID, s.id, "the mission claimed is the one just created")
		lat = append(lat, s.at.Sub(t0))
		select {
		case at := <-signals:
			notified = append(notified, at.Sub(t0))
		case <-time.After(time.Minute):
			b.Fatal("node B's hub was never signalled of the create")
		}
	}
	b.StopTimer()
	p50, p99 := reportWakeup(b, lat)
	reportPhase(b, "create", created)
	reportPhase(b, "notified", notified)
	if riverWake.p99 > 0 {
		b.ReportMetric(riverWake.p50.Seconds()/p50.Seconds(), "x_river_p50")
		b.ReportMetric(riverWake.p99.Seconds()/p99.Seconds(), "x_river_p99")
	}
}

// reportPhase reports the p50 and p99 (ms) of one phase of the samples: create (the create
// call's own time) and notified (from the create's start until node B's hub is signalled).
func reportPhase(b *testing.B, name string, d []time.Duration) {
	slices.Sort(d)
	b.ReportMetric(float64(percentile(d, 0.50).Microseconds())/1000, name+"-p50-ms")
	b.ReportMetric(float64(percentile(d, 0.99).Microseconds())/1000, name+"-p99-ms")
}

// watchHub stamps every signal of a subscription to h with the time it came, until ctx ends.
func watchHub(ctx context.Context, h *engine.Hub) <-chan time.Time {
	sub := h.Subscribe()
	out := make(chan time.Time, 64)
	go func() {
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case <-sub.Ready():
				sub.Take()
				select {
				case out <- time.Now():
				default: // nobody reads between samples; drain empties it
				}
			}
		}
	}()
	return out
}

// drain empties c of the stamps of earlier signals.
func drain(c <-chan time.Time) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// claimLoop is the waiting agent on node e: it says it is idle, waits in BeginClaim for a
// mission, sends it with the time it got it, then hands it over and completes it, until ctx
// ends. An error is sent and ends the loop.
func claimLoop(ctx context.Context, e *engine.Engine, idle chan<- struct{}, got chan<- claimed) {
	for ctx.Err() == nil {
		idle <- struct{}{}
		p, err := e.BeginClaim(ctx, engine.ClaimRequest{AgentID: "waiter", Wait: time.Minute})
		at := time.Now()
		if err != nil {
			if ctx.Err() == nil {
				got <- claimed{err: err}
			}
			return
		}
		got <- claimed{id: p.Fence().MissionID, at: at}
		if _, err = p.HandOver(ctx, engine.Workspace{}, nil); err == nil {
			_, err = e.Complete(ctx, p.Fence(), domain.WorkerResult{Summary: "done"})
		}
		if err != nil {
			got <- claimed{err: err}
			return
		}
	}
}
