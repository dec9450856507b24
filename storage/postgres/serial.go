package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// maxSerialAttempts bounds how often serializable runs one transaction before giving up.
const maxSerialAttempts = 30

// serialBackOff is the pause before running a conflicted transaction again: exponential from
// serialFirstPause to serialMaxPause, randomised (±50%), so that writers that conflicted do
// not all come back at once and conflict again. Every mission state change updates the same
// mission_counts rows, so concurrent acquires conflict (40001) whatever missions they take;
// without the pause an agent among several lost 20 immediate attempts in a row (two nodes,
// six agents, under -race).
const (
	serialFirstPause = time.Millisecond
	serialMaxPause   = 100 * time.Millisecond
)

// retryable reports whether err is PostgreSQL's serialization_failure (40001) or
// deadlock_detected (40P01), or says the server ended the connection before the transaction
// committed (admin_shutdown 57P01, crash_shutdown 57P02: a pooled connection that a
// restarted server had closed passes the pool's ping and fails its first statement so): the
// transaction was rolled back and may simply be run again. When the server is really down,
// the next try fails to connect and that error is returned.
func retryable(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40001" || pg.Code == "40P01" || pg.Code == "57P01" || pg.Code == "57P02")
}

// serializable runs fn in a SERIALIZABLE transaction and commits it, running it again from
// the start (fn must have no effects outside tx) when PostgreSQL aborts it as a serialization
// failure or deadlock, after a randomised, growing pause (serialBackOff), so that rules
// spanning rows hold under concurrent writers. fn's own errors roll back and are returned as
// they are; after maxSerialAttempts conflicts the last one is returned, wrapped with the
// count; ctx ending during a pause returns ctx's error.
func serializable(ctx context.Context, pool *pgxpool.Pool, fn func(pgx.Tx) error) error {
	return retrying(ctx, pool, pgx.TxOptions{IsoLevel: pgx.Serializable}, fn)
}

// retrying is serializable at the isolation and access mode of opts.
func retrying(ctx context.Context, pool *pgxpool.Pool, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = serialFirstPause, serialMaxPause
	var err error
	for attempt := range maxSerialAttempts {
		if attempt > 0 {
			if werr := pause(ctx, b.NextBackOff()); werr != nil {
				return fmt.Errorf("postgres: transaction conflicted (%w), then: %w", err, werr)
			}
		}
		err = pgx.BeginTxFunc(ctx, pool, opts, fn)
		if !retryable(err) {
			return err
		}
	}
	return fmt.Errorf("postgres: transaction still conflicts after %d attempts: %w", maxSerialAttempts, err)
}

// pause waits d, or until ctx ends (its error).
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
