package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// ErrClosed is returned by Update and View after Close.
var ErrClosed = errors.New("storage: closed")

type writeReq struct {
	ctx  context.Context
	fn   func(engine.Tx) error
	done chan error
}

// writer owns the write connection and runs Updates in batches (group commit).
type writer struct {
	q        *connQ
	reqs     chan *writeReq
	quit     chan struct{}
	finished chan struct{}
	maxBatch int
	busyWait time.Duration
	plock    *procLock
	log      *slog.Logger
	trace    func(query string, args []any)
	// committed runs after each commit (Store.committed: the in-process change signal).
	committed func()
	// commits and updates count the committed transactions and the Update functions they
	// carried (WriteStats).
	commits, updates atomic.Int64
}

func startWriter(conn *sql.Conn, plock *procLock, opt Options, committed func()) *writer {
	w := &writer{
		committed: committed,
		plock:     plock,
		q:         &connQ{conn: conn, stmts: map[string]*sql.Stmt{}},
		reqs:      make(chan *writeReq, 1024),
		quit:      make(chan struct{}),
		finished:  make(chan struct{}),
		maxBatch:  opt.MaxBatch,
		busyWait:  4 * opt.BusyTimeout,
		log:       opt.Logger,
		trace:     opt.Trace,
	}
	go w.loop()
	return w
}

// Update runs fn in a write transaction (see the package doc). fn must not call Update or
// View of the same store (it would wait for itself) and must use only the Tx it is given.
// When fn returns an error, everything it wrote is rolled back and the error returned.
func (s *Store) Update(ctx context.Context, fn func(engine.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-s.w.quit:
		return ErrClosed
	default:
	}
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case s.w.reqs <- r:
	case <-s.w.quit:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// The send can win against a Close that has begun (reqs is buffered): a request the
	// writer's drain did not reach before it finished is never run, and gets ErrClosed.
	select {
	case err := <-r.done:
		return err
	case <-s.w.finished:
		select {
		case err := <-r.done:
			return err
		default:
			return ErrClosed
		}
	}
}

func (w *writer) stop() {
	close(w.quit)
	<-w.finished
}

func (w *writer) loop() {
	defer close(w.finished)
	defer func() {
		_ = w.q.close()
		_ = w.q.conn.Close()
		if w.plock != nil {
			_ = w.plock.close()
		}
	}()
	batch := make([]*writeReq, 0, w.maxBatch)
	for {
		select {
		case r := <-w.reqs:
			batch = append(batch[:0], r)
			batch = w.fill(batch)
			if len(batch) < w.maxBatch {
				// Let the callers just answered send their next request before the batch
				// closes: without it a batch mostly held the one request that woke the
				// writer (2.3 Updates per commit with 8 acquire-and-complete workers, 5.2
				// with it; docs/benchmarks.md). Nothing else runnable: it returns at once.
				runtime.Gosched()
				batch = w.fill(batch)
			}
			w.run(batch)
		case <-w.quit:
			w.drain()
			return
		}
	}
}

// fill adds requests that are already waiting, up to maxBatch.
func (w *writer) fill(batch []*writeReq) []*writeReq {
	for len(batch) < w.maxBatch {
		select {
		case r := <-w.reqs:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// drain runs what was queued before stop, then answers ErrClosed to nobody else (senders
// select on quit).
func (w *writer) drain() {
	for {
		select {
		case r := <-w.reqs:
			w.run([]*writeReq{r})
		default:
			return
		}
	}
}

// run executes one batch in one transaction, holding the cross-process writer lock. A batch
// that failed only because the database was busy (another connection held a lock SQLite would
// not wait for: a statement or the commit came back SQLITE_BUSY after busy_timeout) rolled back
// whole and runs again, with backoff, until busyWait has passed; the functions run again from
// the start, which is why an Update function must derive everything from its Tx.
func (w *writer) run(batch []*writeReq) {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 5 * time.Millisecond
	b.MaxInterval = 500 * time.Millisecond
	deadline := time.Now().Add(w.busyWait)
	for {
		results := w.runOnce(batch)
		if !retryable(results) || time.Now().After(deadline) {
			for i, r := range batch {
				r.done <- results[i]
			}
			return
		}
		d := b.NextBackOff()
		w.log.Warn("storage: write transaction hit a busy database; running it again", "requests", len(batch), "after", d, "err", firstErr(results))
		time.Sleep(d)
	}
}

// runOnce runs the batch once under the cross-process writer lock and returns each
// request's result.
func (w *writer) runOnce(batch []*writeReq) []error {
	if w.plock != nil {
		if err := w.plock.lock(); err != nil {
			return fill(make([]error, len(batch)), err)
		}
		defer func() { _ = w.plock.unlock() }()
	}
	return w.runLocked(batch)
}

// retryable: some request failed because the database was busy, and so (the transaction
// having been rolled back whole) did the batch.
func retryable(results []error) bool {
	for _, err := range results {
		if err != nil && isBusy(err) {
			return true
		}
	}
	return false
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func fill(errs []error, err error) []error {
	for i := range errs {
		errs[i] = err
	}
	return errs
}

func (w *writer) runLocked(batch []*writeReq) []error {
	results := make([]error, len(batch))
	bg := context.Background()
	if err := w.begin(); err != nil {
		return fill(results, err)
	}
	single := len(batch) == 1
	for i, r := range batch {
		results[i] = w.runOne(r, single)
		if errors.Is(results[i], errTxAborted) {
			return w.abort(results, results[i])
		}
		if single && results[i] != nil {
			_, _ = w.q.exec(bg, "ROLLBACK")
			return results
		}
		if !single && isBusy(results[i]) { // the savepoint is gone with the work before it
			return w.abort(results, results[i])
		}
	}
	if _, err := w.q.exec(bg, "COMMIT"); err != nil {
		_, _ = w.q.exec(bg, "ROLLBACK")
		err = fmt.Errorf("storage: commit: %w", err)
		for i := range results {
			if results[i] == nil || isBusy(err) {
				results[i] = err
			}
		}
		return results
	}
	w.commits.Add(1)
	w.updates.Add(int64(len(batch)))
	if w.committed != nil {
		w.committed()
	}
	return results
}

// WriteStats returns how many write transactions this store committed since it was opened
// and how many Update functions they carried (group commit: updates/commits is the mean
// batch). Each Update counts once per committed transaction, whether it returned an error
// (rolled back to its savepoint) or not.
func (s *Store) WriteStats() (commits, updates int64) {
	return s.w.commits.Load(), s.w.updates.Load()
}

var errTxAborted = errors.New("storage: transaction aborted")

// runOne runs one request's function, inside a savepoint when the batch has several. The
// function's statements run with a context that is not cancelled (see connQ).
func (w *writer) runOne(r *writeReq, single bool) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	bg := context.Background()
	if !single {
		if _, err := w.q.exec(bg, "SAVEPOINT op"); err != nil {
			return fmt.Errorf("%w: savepoint: %v", errTxAborted, err)
		}
	}
	err := call(r.fn, &txn{q: traced(w.q, w.trace)})
	if single {
		return err
	}
	if err != nil {
		if _, rerr := w.q.exec(bg, "ROLLBACK TO op"); rerr != nil {
			return fmt.Errorf("%w: rollback to savepoint after %v: %v", errTxAborted, err, rerr)
		}
	}
	if _, rerr := w.q.exec(bg, "RELEASE op"); rerr != nil {
		return fmt.Errorf("%w: release savepoint: %v", errTxAborted, rerr)
	}
	return err
}

// abort rolls the whole batch back after SQLite ended the transaction on its own (or a busy
// statement made it unsafe to go on): every request gets cause, or its own error.
func (w *writer) abort(results []error, cause error) []error {
	_, _ = w.q.exec(context.Background(), "ROLLBACK")
	for i := range results {
		if results[i] == nil || errors.Is(results[i], errTxAborted) || isBusy(cause) {
			results[i] = cause
		}
	}
	return results
}

// call runs fn, turning a panic into an error so one bad function cannot kill the writer.
func call(fn func(engine.Tx) error, tx *txn) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("storage: update function panicked: %v", p)
		}
	}()
	return fn(tx)
}

// begin starts BEGIN IMMEDIATE. busy_timeout already waited for another process's lock; a
// BUSY that still comes back is retried with capped backoff so it never reaches a caller,
// until busyWait has passed.
func (w *writer) begin() error {
	_, err := w.q.exec(context.Background(), "BEGIN IMMEDIATE")
	if err == nil || !isBusy(err) { // the common case, without building a backoff
		if err != nil {
			return fmt.Errorf("storage: begin write transaction: %w", err)
		}
		return nil
	}
	op := func() (struct{}, error) {
		_, err := w.q.exec(context.Background(), "BEGIN IMMEDIATE")
		if err != nil && !isBusy(err) {
			return struct{}{}, backoff.Permanent(err)
		}
		return struct{}{}, err
	}
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 5 * time.Millisecond
	b.MaxInterval = 500 * time.Millisecond
	if _, err := backoff.Retry(context.Background(), op, backoff.WithBackOff(b), backoff.WithMaxElapsedTime(w.busyWait)); err != nil {
		return fmt.Errorf("storage: begin write transaction: %w", err)
	}
	return nil
}

func isBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		code := se.Code() & 0xff
		return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
	}
	return false
}

// View runs fn on one read transaction (a consistent snapshot).
func (s *Store) View(ctx context.Context, fn func(engine.Reader) error) error {
	select {
	case <-s.w.quit:
		return ErrClosed
	default:
	}
	tx, err := s.readDB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: begin read: %w", err)
	}
	var misses []string
	func() {
		defer func() { _ = tx.Rollback() }()
		err = fn(&txn{q: traced(readTx{tx: tx, cache: s.readers, misses: &misses}, s.trace)})
	}()
	for _, q := range misses { // holding no connection now (see stmtCache.fill)
		s.readers.fill(ctx, q)
	}
	return err
}
