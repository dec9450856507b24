package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// querier runs statements for one transaction: pgx.Tx does, for both Update's serializable
// write transactions and View's read-only snapshots, so the same Reader code serves both.
// Statements use PostgreSQL's $1, $2 … placeholders.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// txn implements engine.Tx (and so engine.Reader) over one transaction.
type txn struct {
	q querier
	// notified says a statement of this transaction queued the ChangeChannel notification
	// already (EventAppend does, in its own statement), so Update need not send Notify.
	notified bool
}

// rowScanner is what scan functions read from: a pgx.Row or the current row of pgx.Rows.
type rowScanner interface{ Scan(dest ...any) error }
