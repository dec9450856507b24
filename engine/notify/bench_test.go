package notify_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/notify"
)

// BenchmarkFillOutbox measures what the notifier costs the store per event the scheduler
// writes: routing a batch of 200 events (one in ten a notification, for two sinks) and moving
// the cursor, in one write transaction. The reference, measured in the same run on the same
// database, is the least any reader of those events pays: reading the same 200 events in one
// read transaction (EventList). x_read is the ratio; ns/event the cost per event.
func BenchmarkFillOutbox(b *testing.B) {
	w := &world{t: &testing.T{}, ctx: b.Context(), path: b.TempDir() + "/bench.db", clock: engine.NewFakeClock(t0), logs: &syncBuffer{}}
	st, err := openStore(w)
	require.NoError(b, err)
	defer st.Close()
	const perBatch = 200
	events := func(n int) {
		require.NoError(b, st.Update(w.ctx, func(tx engine.Tx) error {
			for i := range n {
				ev := &domain.Event{At: w.clock.Now(), Type: "lease.renewed", MissionID: fmt.Sprintf("msn_%d", i), Data: json.RawMessage(`{"to":"running"}`)}
				if i%10 == 0 {
					ev.Type, ev.Data = "escalation.raised", json.RawMessage(`{"escalation_id":"esc_1","kind":"question","missions":["msn_1"],"reason":"why"}`)
				}
				if err := tx.EventAppend(w.ctx, ev); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	sinks := []notify.Sink{{Name: "a", Webhook: "http://127.0.0.1:1/", Timeout: time.Second}, {Name: "b", Command: []string{"true"}, Timeout: time.Second}}
	skipped := 0
	route := notify.Route(sinks, 0, w.clock.Now, &skipped)
	var fill, read time.Duration
	for b.Loop() {
		b.StopTimer()
		events(perBatch)
		var cursor int64
		require.NoError(b, st.View(w.ctx, func(r engine.Reader) error {
			cursor, err = r.NoticeCursor(w.ctx)
			return err
		}))
		start := time.Now()
		require.NoError(b, st.View(w.ctx, func(r engine.Reader) error {
			evs, err := r.EventList(w.ctx, engine.EventFilter{AfterSeq: cursor, Limit: perBatch})
			if len(evs) != perBatch {
				return fmt.Errorf("read %d events", len(evs))
			}
			return err
		}))
		read += time.Since(start)
		b.StartTimer()
		start = time.Now()
		n, q, err := w.e.FillOutbox(w.ctx, route, perBatch)
		fill += time.Since(start)
		require.NoError(b, err)
		require.Equal(b, perBatch, n)
		require.Equal(b, 2*perBatch/10, q)
		b.StopTimer()
		require.NoError(b, st.Update(w.ctx, func(tx engine.Tx) error { // keep the outbox small between rounds
			ns, err := tx.NoticesDue(w.ctx, w.clock.Now(), 1000)
			for _, no := range ns {
				if err == nil {
					err = tx.NoticeDelete(w.ctx, no.ID)
				}
			}
			return err
		}))
		b.StartTimer()
	}
	rounds := float64(b.N)
	b.ReportMetric(float64(fill.Nanoseconds())/rounds/perBatch, "ns/event")
	b.ReportMetric(float64(read.Nanoseconds())/rounds/perBatch, "read_ns/event")
	b.ReportMetric(float64(fill)/float64(read), "x_read")
}

func openStore(w *world) (engine.Store, error) {
	st, err := openAt(w)
	if err == nil {
		w.st, w.e = st, engine.New(st, engine.Options{Clock: w.clock, DefaultRepository: "/repo"})
	}
	return st, err
}
