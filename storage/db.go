package storage

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// querier runs statements for one transaction. Both the writer's connection and read
// transactions implement it, so the same Reader code serves Update and View.
type querier interface {
	exec(ctx context.Context, query string, args ...any) (sql.Result, error)
	query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	queryRow(ctx context.Context, query string, args ...any) *sql.Row
}

// stmtCache keeps one prepared statement per query text on a *sql.DB (database/sql prepares
// it again on each pooled connection as needed).
type stmtCache struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}} }

func (c *stmtCache) get(ctx context.Context, q string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts[q]; ok {
		return s, nil
	}
	s, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.stmts[q] = s
	return s, nil
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, s := range c.stmts {
		errs = append(errs, s.Close())
	}
	c.stmts = map[string]*sql.Stmt{}
	return errors.Join(errs...)
}

// readTx runs statements inside one read transaction with cached prepared statements.
type readTx struct {
	tx    *sql.Tx
	cache *stmtCache
}

func (r readTx) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	s, err := r.cache.get(ctx, q)
	if err != nil {
		return nil, err
	}
	return r.tx.StmtContext(ctx, s), nil
}

func (r readTx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	s, err := r.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

func (r readTx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	s, err := r.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

func (r readTx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	s, err := r.stmt(ctx, q)
	if err != nil {
		return r.tx.QueryRowContext(ctx, q, args...) // reports the same prepare error through Scan
	}
	return s.QueryRowContext(ctx, args...)
}

// connQ runs statements on the writer's own connection with statements prepared once on it.
// Only the writer goroutine uses it.
type connQ struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

func (c *connQ) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if s, ok := c.stmts[q]; ok {
		return s, nil
	}
	s, err := c.conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.stmts[q] = s
	return s, nil
}

// The writer's statements ignore the caller's context on purpose: cancelling a statement
// interrupts SQLite, which rolls back the whole shared transaction. Update checks the
// context before running a function instead.

func (c *connQ) exec(_ context.Context, q string, args ...any) (sql.Result, error) {
	ctx := context.Background()
	s, err := c.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

func (c *connQ) query(_ context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx := context.Background()
	s, err := c.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

func (c *connQ) queryRow(_ context.Context, q string, args ...any) *sql.Row {
	ctx := context.Background()
	s, err := c.stmt(ctx, q)
	if err != nil {
		return c.conn.QueryRowContext(ctx, q, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

func (c *connQ) close() error {
	var errs []error
	for _, s := range c.stmts {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
