package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
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
	done chan error // buffered: the request's result, or errLead (this caller leads now)
}

// errLead, sent on a waiting request's done channel, hands the writer's connection to that
// request's caller: it leads the next batches (writer.lead).
var errLead = errors.New("storage: lead the next write batch")

// writer owns the write connection and runs Updates in batches (group commit) on the
// goroutine of whichever caller leads. An Update that finds no batch running leads: it runs
// its own request, and the requests queued behind it, on its own goroutine. An Update that
// finds one running queues and waits; when the leader's own request is done it hands the
// connection to the first waiter, which leads the next batch. A lone caller so waits for no
// other goroutine, and under contention each batch costs one hand-off, not one per request
// there and one back (docs/benchmarks.md, "Leader group commit").
type writer struct {
	mu      sync.Mutex
	queue   []*writeReq   // waiting requests, oldest first
	leading bool          // a caller holds the connection (runs batches)
	closed  bool          // stop began: no request is queued any more
	stopped chan struct{} // closed by the last leader after stop began (nil: none waits)

	q        *connQ
	quit     chan struct{} // closed when stop begins
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
	return &writer{
		committed: committed,
		plock:     plock,
		q:         &connQ{conn: conn, stmts: map[string]*sql.Stmt{}},
		quit:      make(chan struct{}),
		maxBatch:  opt.MaxBatch,
		busyWait:  4 * opt.BusyTimeout,
		log:       opt.Logger,
		trace:     opt.Trace,
	}
}

// Update runs fn in a write transaction (see the package doc). fn must not call Update or
// View of the same store (it would wait for itself) and must use only the Tx it is given.
// When fn returns an error, everything it wrote is rolled back and the error returned.
// After Close it returns ErrClosed; an Update queued before Close began runs.
func (s *Store) Update(ctx context.Context, fn func(engine.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.w.update(&writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)})
}

func (w *writer) update(r *writeReq) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.queue = append(w.queue, r)
	if w.leading {
		w.mu.Unlock()
		if err := <-r.done; err != errLead {
			return err
		}
	} else {
		w.leading = true
		w.mu.Unlock()
	}
	return w.lead(r)
}

// lead runs batches from the queue's head until own has its result, then hands the
// connection on (handOff) and returns own's result.
func (w *writer) lead(own *writeReq) error {
	for {
		w.run(w.take())
		select {
		case err := <-own.done:
			w.handOff()
			return err
		default: // more than maxBatch requests were queued before own
		}
	}
}

// take removes the next batch (up to maxBatch requests) from the queue's head. A short batch
// waits for one yield first: callers just answered can queue their next request and share
// the commit (a batch otherwise mostly held the one request that began it: 2.3 Updates per
// commit with 8 acquire-and-complete workers, 5.2 with it; docs/benchmarks.md). Nothing else
// runnable: the yield returns at once.
func (w *writer) take() []*writeReq {
	w.mu.Lock()
	short := len(w.queue) < w.maxBatch
	w.mu.Unlock()
	if short {
		runtime.Gosched()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n := min(len(w.queue), w.maxBatch)
	batch := slices.Clone(w.queue[:n])
	w.queue = slices.Delete(w.queue, 0, n)
	return batch
}

// handOff gives the connection to the oldest waiting request's caller, or, with none waiting,
// gives it up (and, after stop began, tells stop that no batch runs any more).
func (w *writer) handOff() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) > 0 {
		w.queue[0].done <- errLead
		return
	}
	w.leading = false
	if w.closed && w.stopped != nil {
		close(w.stopped)
		w.stopped = nil
	}
}

// stop refuses new Updates, waits until the requests queued before it have run, and closes
// the write connection.
func (w *writer) stop() {
	w.mu.Lock()
	w.closed = true
	close(w.quit)
	var wait chan struct{}
	if w.leading {
		wait = make(chan struct{})
		w.stopped = wait
	} else {
		w.leading = true // nobody leads again: the connection is stop's now
	}
	w.mu.Unlock()
	if wait != nil {
		<-wait
	}
	_ = w.q.close()
	_ = w.q.conn.Close()
	if w.plock != nil {
		_ = w.plock.close()
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
