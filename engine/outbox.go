package engine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Notice is one notification waiting in the outbox for one sink ([[notify]] in the
// configuration): the leader turns events into notices (FillOutbox) and its notifier delivers
// them, at least once, across restarts. A delivered notice is deleted; one given up is kept
// (GaveUpAt set) so that doctor can say so, until pruned.
type Notice struct {
	ID int64 `json:"id"`
	// Sink is the name of the [[notify]] section it goes to.
	Sink string `json:"sink"`
	// EventSeq is the event it was made from (events.seq).
	EventSeq int64 `json:"event_seq"`
	// Type is the notification's type ("escalation.opened", …; engine/notify lists them).
	Type string `json:"type"`
	// Body is the JSON document delivered (webhook body, command stdin).
	Body      json.RawMessage `json:"body"`
	CreatedAt time.Time       `json:"created_at"`
	// Attempts counts the deliveries tried so far; NextAt is when the next one is due.
	Attempts int       `json:"attempts"`
	NextAt   time.Time `json:"next_at"`
	// LastError is what the last failed delivery said ("" before the first failure).
	LastError string `json:"last_error,omitempty"`
	// GaveUpAt is when delivery stopped being retried (zero while it still is).
	GaveUpAt time.Time `json:"gave_up_at,omitzero"`
}

// NoticeCounts is the outbox at a glance: Pending notices not yet delivered, of which Failing
// have failed at least once and are retried, and GaveUp that are no longer retried.
type NoticeCounts struct {
	Pending int `json:"pending"`
	Failing int `json:"failing"`
	GaveUp  int `json:"gave_up"`
}

// Route turns one event into the notices it makes (none for most events). It must be a pure
// function of the event: FillOutbox may call it more than once for the same event when its
// transaction is retried.
type Route func(ev domain.Event) []Notice

// FillOutbox turns the events after the outbox cursor into notices with route, at most batch
// events per call, and moves the cursor past them in the same transaction: each event is
// routed once, and a crash loses none. It returns how many events it read (batch: call again)
// and how many notices it queued.
func (e *Engine) FillOutbox(ctx context.Context, route Route, batch int) (events, queued int, err error) {
	// Most wake-ups find no new event: a read says so without taking the write lock.
	pending, err := viewValue(ctx, e, func(r Reader) (bool, error) {
		cursor, err := r.NoticeCursor(ctx)
		if err != nil {
			return false, err
		}
		evs, err := r.EventList(ctx, EventFilter{AfterSeq: cursor, Limit: 1})
		return len(evs) > 0, err
	})
	if err != nil || !pending {
		return 0, 0, err
	}
	err = e.update(ctx, "notifier", func(o *op) error {
		events, queued = 0, 0
		cursor, err := o.tx.NoticeCursor(o.ctx)
		if err != nil {
			return err
		}
		evs, err := o.tx.EventList(o.ctx, EventFilter{AfterSeq: cursor, Limit: batch})
		if err != nil || len(evs) == 0 {
			return err
		}
		var ns []Notice
		for _, ev := range evs {
			for _, n := range route(ev) {
				n.EventSeq, n.CreatedAt = ev.Seq, o.now
				if n.NextAt.IsZero() {
					n.NextAt = o.now
				}
				ns = append(ns, n)
			}
		}
		events, queued = len(evs), len(ns)
		return o.tx.NoticeEnqueue(o.ctx, evs[len(evs)-1].Seq, ns)
	})
	return events, queued, err
}

// NoticesDue returns the notices whose next delivery is due at now, oldest due first, at most
// limit.
func (e *Engine) NoticesDue(ctx context.Context, now time.Time, limit int) ([]Notice, error) {
	return viewValue(ctx, e, func(r Reader) ([]Notice, error) { return r.NoticesDue(ctx, now, limit) })
}

// NoticeDelivered removes a delivered notice from the outbox.
func (e *Engine) NoticeDelivered(ctx context.Context, id int64) error {
	return e.update(ctx, "notifier", func(o *op) error { return o.tx.NoticeDelete(o.ctx, id) })
}

// NoticeFailed records a failed delivery of n: its Attempts, NextAt, LastError and GaveUpAt
// as the caller set them.
func (e *Engine) NoticeFailed(ctx context.Context, n Notice) error {
	return e.update(ctx, "notifier", func(o *op) error { return o.tx.NoticeRetry(o.ctx, &n) })
}

// NoticeSummary returns the outbox's counts and its most recently given-up notices (at most
// limit), for doctor and status.
func (e *Engine) NoticeSummary(ctx context.Context, limit int) (NoticeCounts, []Notice, error) {
	var c NoticeCounts
	var gave []Notice
	err := e.view(ctx, func(r Reader) error {
		var err error
		if c, err = r.NoticeCounts(ctx); err != nil {
			return err
		}
		gave, err = r.NoticesGaveUp(ctx, limit)
		return err
	})
	return c, gave, err
}

// PruneNotices deletes the notices given up before before; it returns how many went.
func (e *Engine) PruneNotices(ctx context.Context, before time.Time) (int, error) {
	var n int
	err := e.update(ctx, "notifier", func(o *op) error {
		var err error
		n, err = o.tx.NoticePrune(o.ctx, before)
		return err
	})
	return n, err
}
