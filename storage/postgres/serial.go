package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// maxSerialAttempts bounds how often serializable retries one transaction before giving up.
const maxSerialAttempts = 20

// retryable reports whether err is PostgreSQL's serialization_failure (40001) or
// deadlock_detected (40P01): the transaction was rolled back and may simply be run again.
func retryable(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40001" || pg.Code == "40P01")
}

// serializable runs fn in a SERIALIZABLE transaction and commits it, running it again from
// the start (fn must have no effects outside tx) when PostgreSQL aborts it as a serialization
// failure or deadlock, so that rules spanning rows hold under concurrent writers. fn's own
// errors roll back and are returned as they are; after maxSerialAttempts conflicts the last
// one is returned, wrapped with the count.
func serializable(ctx context.Context, pool *pgxpool.Pool, fn func(pgx.Tx) error) error {
	var err error
	for range maxSerialAttempts {
		err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.Serializable}, fn)
		if !retryable(err) {
			return err
		}
	}
	return fmt.Errorf("postgres: transaction still conflicts after %d attempts: %w", maxSerialAttempts, err)
}
