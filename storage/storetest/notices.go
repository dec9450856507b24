package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseNotices covers the notification outbox: NoticeCursor, NoticeEnqueue, NoticesDue,
// NoticeDelete, NoticeRetry, NoticeCounts, NoticesGaveUp and NoticePrune.
func exerciseNotices(t *testing.T, open Opener) {
	group(t, "NoticeEnqueue", func(t *testing.T) {
		run(t, "InsertsInOrderAndMovesTheCursor", open, func(t *testing.T, e *env) {
			require.Equal(t, int64(0), noticeCursor(e), "a new store starts at its newest event (none)")
			ns := []engine.Notice{notice(e, "hook", 7, e.next()), notice(e, "cmd", 7, e.next())}
			e.update(func(tx engine.Tx) error { return tx.NoticeEnqueue(e.ctx, 9, ns) })
			require.Greater(t, ns[0].ID, int64(0))
			require.Greater(t, ns[1].ID, ns[0].ID)
			require.Equal(t, int64(9), noticeCursor(e))
			got := due(e, t0.Add(time.Hour), 0)
			require.Len(t, got, 2)
			for i := range ns {
				requireSameNotice(t, ns[i], got[i])
			}
		})
		run(t, "NothingToQueueStillMovesTheCursor", open, func(t *testing.T, e *env) {
			e.update(func(tx engine.Tx) error { return tx.NoticeEnqueue(e.ctx, 4, nil) })
			require.Equal(t, int64(4), noticeCursor(e))
			require.Empty(t, due(e, t0.Add(time.Hour), 0))
		})
		run(t, "RolledBackWithItsTransaction", open, func(t *testing.T, e *env) {
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				if err := tx.NoticeEnqueue(e.ctx, 5, []engine.Notice{notice(e, "hook", 5, e.next())}); err != nil {
					return err
				}
				return domain.ErrGuard
			})
			require.ErrorIs(t, err, domain.ErrGuard)
			require.Equal(t, int64(0), noticeCursor(e))
			require.Empty(t, due(e, t0.Add(time.Hour), 0))
		})
	})

	group(t, "NoticesDue", func(t *testing.T) {
		run(t, "OnlyDueAndNotGivenUpByNextAtThenID", open, func(t *testing.T, e *env) {
			late, early, same, future := notice(e, "a", 1, t0.Add(3*time.Second)), notice(e, "b", 2, t0.Add(time.Second)),
				notice(e, "c", 3, t0.Add(3*time.Second)), notice(e, "d", 4, t0.Add(time.Hour))
			ns := []engine.Notice{late, early, same, future}
			e.update(func(tx engine.Tx) error { return tx.NoticeEnqueue(e.ctx, 4, ns) })
			require.Equal(t, []string{"b", "a", "c"}, sinks(due(e, t0.Add(3*time.Second), 0)))
			require.Equal(t, []string{"b"}, sinks(due(e, t0.Add(3*time.Second), 1)))
			gave := ns[1]
			gave.GaveUpAt = t0.Add(2 * time.Second)
			e.update(func(tx engine.Tx) error { return tx.NoticeRetry(e.ctx, &gave) })
			require.Equal(t, []string{"a", "c"}, sinks(due(e, t0.Add(3*time.Second), 0)))
		})
	})

	group(t, "NoticeRetry", func(t *testing.T) {
		run(t, "WritesTheDeliveryFieldsAndNotFoundWhenGone", open, func(t *testing.T, e *env) {
			ns := []engine.Notice{notice(e, "hook", 1, t0)}
			e.update(func(tx engine.Tx) error { return tx.NoticeEnqueue(e.ctx, 1, ns) })
			n := ns[0]
			n.Attempts, n.NextAt, n.LastError = 2, t0.Add(time.Minute), "HTTP 500 from http://127.0.0.1/hook"
			e.update(func(tx engine.Tx) error { return tx.NoticeRetry(e.ctx, &n) })
			require.Empty(t, due(e, t0.Add(time.Second), 0), "not due before its next attempt")
			got := due(e, t0.Add(time.Minute), 0)
			require.Len(t, got, 1)
			requireSameNotice(t, n, got[0])
			e.update(func(tx engine.Tx) error { return tx.NoticeDelete(e.ctx, n.ID) })
			err := e.s.Update(e.ctx, func(tx engine.Tx) error { return tx.NoticeRetry(e.ctx, &n) })
			require.ErrorIs(t, err, domain.ErrNotFound)
		})
	})

	group(t, "NoticeDelete", func(t *testing.T) {
		run(t, "RemovesAndIgnoresAbsent", open, func(t *testing.T, e *env) {
			ns := []engine.Notice{notice(e, "a", 1, t0), notice(e, "b", 1, t0)}
			e.update(func(tx engine.Tx) error { return tx.NoticeEnqueue(e.ctx, 1, ns) })
			e.update(func(tx engine.Tx) error {
				if err := tx.NoticeDelete(e.ctx, ns[0].ID); err != nil {
					return err
				}
				return tx.NoticeDelete(e.ctx, ns[0].ID)
			})
			require.Equal(t, []string{"b"}, sinks(due(e, t0, 0)))
		})
	})

	group(t, "NoticeCounts", func(t *testing.T) {
		run(t, "PendingFailingGaveUp", open, func(t *testing.T, e *env) {
			ns := []engine.Notice{notice(e, "a", 1, t0), notice(e, "b", 1, t0), notice(e, "c", 1, t0)}
			e.update(func(tx engine.Tx) error { return tx.NoticeEnqueue(e.ctx, 1, ns) })
			ns[1].Attempts, ns[1].LastError = 1, "refused"
			ns[2].Attempts, ns[2].GaveUpAt = 5, t0.Add(time.Hour)
			e.update(func(tx engine.Tx) error {
				if err := tx.NoticeRetry(e.ctx, &ns[1]); err != nil {
					return err
				}
				return tx.NoticeRetry(e.ctx, &ns[2])
			})
			var c engine.NoticeCounts
			e.view(func(r engine.Reader) error {
				var err error
				c, err = r.NoticeCounts(e.ctx)
				return err
			})
			require.Equal(t, engine.NoticeCounts{Pending: 2, Failing: 1, GaveUp: 1}, c)
		})
	})

	group(t, "NoticesGaveUp", func(t *testing.T) {
		run(t, "NewestFirstAndPruned", open, func(t *testing.T, e *env) {
			ns := []engine.Notice{notice(e, "old", 1, t0), notice(e, "new", 1, t0), notice(e, "live", 1, t0)}
			e.update(func(tx engine.Tx) error { return tx.NoticeEnqueue(e.ctx, 1, ns) })
			ns[0].GaveUpAt, ns[1].GaveUpAt = t0.Add(time.Minute), t0.Add(time.Hour)
			e.update(func(tx engine.Tx) error {
				if err := tx.NoticeRetry(e.ctx, &ns[0]); err != nil {
					return err
				}
				return tx.NoticeRetry(e.ctx, &ns[1])
			})
			require.Equal(t, []string{"new", "old"}, sinks(gaveUp(e)))
			requireSameNotice(t, ns[1], gaveUp(e)[0])
			var n int
			e.update(func(tx engine.Tx) error {
				var err error
				n, err = tx.NoticePrune(e.ctx, t0.Add(30*time.Minute))
				return err
			})
			require.Equal(t, 1, n, "only the one given up before the cut")
			require.Equal(t, []string{"new"}, sinks(gaveUp(e)))
			require.Equal(t, []string{"live"}, sinks(due(e, t0, 0)), "a notice still retried is never pruned")
		})
	})
}

func notice(e *env, sink string, seq int64, next time.Time) engine.Notice {
	return engine.Notice{Sink: sink, EventSeq: seq, Type: "escalation.opened",
		Body: json.RawMessage(`{"type": "escalation.opened", "seq": 1}`), CreatedAt: e.next(), NextAt: next}
}

func noticeCursor(e *env) int64 {
	var seq int64
	e.view(func(r engine.Reader) error {
		var err error
		seq, err = r.NoticeCursor(e.ctx)
		return err
	})
	return seq
}

func due(e *env, now time.Time, limit int) []engine.Notice {
	var out []engine.Notice
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.NoticesDue(e.ctx, now, limit)
		return err
	})
	return out
}

func gaveUp(e *env) []engine.Notice {
	var out []engine.Notice
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.NoticesGaveUp(e.ctx, 0)
		return err
	})
	return out
}

func sinks(ns []engine.Notice) []string {
	out := []string{}
	for _, n := range ns {
		out = append(out, n.Sink)
	}
	return out
}

// requireSameNotice compares two notices, the body as JSON (a backend keeps its value, not
// its bytes) and times to the millisecond.
func requireSameNotice(t *testing.T, want, got engine.Notice) {
	t.Helper()
	require.JSONEq(t, string(want.Body), string(got.Body))
	require.True(t, want.CreatedAt.Equal(got.CreatedAt), "created_at %v, want %v", got.CreatedAt, want.CreatedAt)
	require.True(t, want.NextAt.Equal(got.NextAt), "next_at %v, want %v", got.NextAt, want.NextAt)
	require.True(t, want.GaveUpAt.Equal(got.GaveUpAt), "gave_up_at %v, want %v", got.GaveUpAt, want.GaveUpAt)
	want.Body, got.Body = nil, nil
	want.CreatedAt, want.NextAt, want.GaveUpAt = got.CreatedAt, got.NextAt, got.GaveUpAt
	require.Equal(t, want, got)
}
