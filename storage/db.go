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

// lookup returns the cached statement for q, if any.
func (c *stmtCache) lookup(q string) (*sql.Stmt, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.stmts[q]
	return s, ok
}

// fill prepares q on the pool and caches it. It must be called holding no connection of the
// pool and no lock: preparing waits for a free connection, and a caller that held one (an
// open read transaction) deadlocked when every connection was held the same way.
func (c *stmtCache) fill(ctx context.Context, q string) {
	if _, ok := c.lookup(q); ok {
		return
	}
	s, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return // the statement runs unprepared next time too, and reports its error there
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.stmts[q]; ok {
		_ = s.Close()
		return
	}
	c.stmts[q] = s
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

// readTx runs statements inside one read transaction with cached prepared statements. A
// statement not in the cache yet runs unprepared on the transaction and is noted in misses;
// View prepares the misses into the cache after the transaction ended.
type readTx struct {
	tx     *sql.Tx
	cache  *stmtCache
	misses *[]string
}

func (r readTx) stmt(ctx context.Context, q string) *sql.Stmt {
	if s, ok := r.cache.lookup(q); ok {
		return r.tx.StmtContext(ctx, s)
	}
	*r.misses = append(*r.misses, q)
	return nil
}

func (r readTx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if s := r.stmt(ctx, q); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return r.tx.ExecContext(ctx, q, args...)
}

func (r readTx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if s := r.stmt(ctx, q); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return r.tx.QueryContext(ctx, q, args...)
}

func (r readTx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if s := r.stmt(ctx, q); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return r.tx.QueryRowContext(ctx, q, args...)
}

// connQ runs statements on the writer's own connection with statements prepared once on it.
// Only the caller that leads the writer (writer.lead) uses it, one at a time.
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

// tracer reports each statement's text to fn before running it on q (Options.Trace).
type tracer struct {
	q  querier
	fn func(string, []any)
}

// traced wraps q with fn, or returns q itself when fn is nil.
func traced(q querier, fn func(string, []any)) querier {
	if fn == nil {
		return q
	}
	return tracer{q: q, fn: fn}
}

func (t tracer) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	t.fn(q, args)
	return t.q.exec(ctx, q, args...)
}

func (t tracer) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	t.fn(q, args)
	return t.q.query(ctx, q, args...)
}

func (t tracer) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	t.fn(q, args)
	return t.q.queryRow(ctx, q, args...)
}
