package postgres

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// ErrClosed is returned by Update and View after Close.
var ErrClosed = errors.New("postgres: store closed")

// Options tune a Store. The zero value is usable.
type Options struct {
	// Logger receives the store's warnings (a lost change listener); nil discards them.
	Logger *slog.Logger
	// ConnectWait is how long Open keeps retrying a server it cannot reach (0:
	// DefaultConnectWait; negative: no retry).
	ConnectWait time.Duration
}

// Store is the engine's store seam (engine.Store) on PostgreSQL. Update runs at SERIALIZABLE
// isolation and is run again from the start when PostgreSQL aborts it as a serialization
// failure or deadlock (serializable), so that the rules spanning rows listed in
// engine/store.go hold under concurrent writers, on this node or others. Every write
// transaction notifies ChangeChannel, and Changes listens on it: no polling.
type Store struct {
	pool *pgxpool.Pool
	url  string
	log  *slog.Logger

	// retries counts the transactions Update ran again (SerialRetries).
	retries atomic.Int64

	// done is closed by Close; it ends the change listeners.
	done      chan struct{}
	mu        sync.RWMutex // held shared by Update and View, exclusively by Close
	closed    bool
	closeOnce sync.Once
	closeErr  error
}

// Open connects to the database at url (a postgres:// URL or key=value connection string),
// waiting up to opt.ConnectWait for a server that cannot be reached yet (connect), brings its schema to SchemaVersion (Migrate: a newer schema is refused with ErrSchemaTooNew)
// and returns the store. Errors name what failed: the URL, the connection, or the migration.
func Open(ctx context.Context, url string, opt Options) (*Store, error) {
	return open(ctx, url, opt, nil)
}

// open is Open, telling report (when set) why each try to connect failed.
func open(ctx context.Context, url string, opt Options, report func(string)) (*Store, error) {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pool, err := connect(ctx, url, opt.connectWait(), log, report)
	if err != nil {
		return nil, err
	}
	if err := Migrate(ctx, pool, log); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{pool: pool, url: url, log: log, done: make(chan struct{})}, nil
}

// connectWait is ConnectWait with its default.
func (o Options) connectWait() time.Duration {
	if o.ConnectWait == 0 {
		return DefaultConnectWait
	}
	return o.ConnectWait
}

// Update runs fn in one serializable write transaction that also notifies ChangeChannel; see
// engine.Store. fn may run more than once (a serialization failure runs it again) and must
// derive everything from its Tx. After Close it returns ErrClosed; while the server cannot
// be reached, an *UnavailableError.
func (s *Store) Update(ctx context.Context, fn func(engine.Tx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	runs := int64(0)
	err := serializable(ctx, s.pool, func(tx pgx.Tx) error {
		runs++
		t := &txn{q: tx}
		if err := fn(t); err != nil {
			return err
		}
		if t.notified {
			return nil // an event append queued the notification already
		}
		return Notify(ctx, tx)
	})
	if runs > 1 {
		s.retries.Add(runs - 1)
	}
	return unavailable(ctx, err, s.url)
}

// SerialRetries is how many times, since Open, Update ran a transaction again because
// PostgreSQL aborted it as a serialization failure or deadlock (40001, 40P01): the price of
// concurrent writers, for benchmarks and diagnostics.
func (s *Store) SerialRetries() int64 { return s.retries.Load() }

// View runs fn on one consistent, read-only snapshot (REPEATABLE READ). After Close it
// returns ErrClosed; while the server cannot be reached, an *UnavailableError.
func (s *Store) View(ctx context.Context, fn func(engine.Reader) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	return unavailable(ctx, retrying(ctx, s.pool, opts, func(tx pgx.Tx) error { return fn(&txn{q: tx}) }), s.url)
}

// Changes signals on every commit of any process on the database (LISTEN on ChangeChannel,
// on a connection of its own; interval is unused: nothing polls). It closes when ctx ends or
// the store closes.
func (s *Store) Changes(ctx context.Context, _ time.Duration) <-chan struct{} {
	out := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-ctx.Done():
		case <-s.done:
		}
		cancel()
	}()
	go Listen(ctx, s.url, out, s.log)
	return out
}

// Close waits for the Updates and Views running, then closes the pool; later calls fail with
// ErrClosed. A second Close returns the first one's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.pool.Close()
	})
	return s.closeErr
}
