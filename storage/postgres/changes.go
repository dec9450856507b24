package postgres

import (
	"context"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/jackc/pgx/v5"
)

// ChangeChannel is the LISTEN/NOTIFY channel every committing write transaction notifies
// (Notify), and Changes listens on.
const ChangeChannel = "mcp_scheduler_changes"

// Notify queues the change notification in tx: PostgreSQL sends it only if tx commits, once
// per transaction however often it is called (identical payloads are merged).
func Notify(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "SELECT pg_notify($1, '')", ChangeChannel)
	return err
}

// Listen signals out (one slot, coalescing, never blocking) on every notification of
// ChangeChannel, using its own connection to url, until ctx ends; then it closes out. It
// signals once after each (re)connection too, since a change may have been missed while it
// was not listening; a lost connection is logged and retried with backoff. No polling.
func Listen(ctx context.Context, url string, out chan struct{}, log *slog.Logger) {
	defer close(out)
	b := backoff.NewExponentialBackOff()
	b.MaxInterval = 5 * time.Second
	for ctx.Err() == nil {
		err := listenOnce(ctx, url, out, b.Reset)
		if ctx.Err() != nil {
			return
		}
		log.Warn("postgres: change listener lost its connection; reconnecting", "err", err)
		signal(out)
		select {
		case <-ctx.Done():
			return
		case <-time.After(b.NextBackOff()):
		}
	}
}

// listenOnce connects, LISTENs, signals once and forwards notifications until an error.
func listenOnce(ctx context.Context, url string, out chan struct{}, connected func()) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ChangeChannel}.Sanitize()); err != nil {
		return err
	}
	connected()
	signal(out)
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		signal(out)
	}
}

// signal puts a wake-up in the one-slot channel unless one is already waiting.
func signal(out chan struct{}) {
	select {
	case out <- struct{}{}:
	default:
	}
}
