package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ErrLeading: a scheduler process (serve or daemon) leads the loop on the database being
// exported. Stop it first: a copy taken meanwhile would miss its later writes.
var ErrLeading = errors.New("a scheduler is running on this database")

// LeadingError is ErrLeading with the leader lease's owner ("host:pid:random", as written by
// the engine; "" when unknown), its epoch and when the lease runs out.
type LeadingError struct {
	Owner     string
	Epoch     int64
	ExpiresAt time.Time
}

func (e *LeadingError) Error() string {
	return fmt.Sprintf("%s (leader %q, epoch %d)", ErrLeading, e.Owner, e.Epoch)
}

func (e *LeadingError) Unwrap() error { return ErrLeading }

// Export is a SQLite store file opened read-only for copying it elsewhere (mcp-scheduler
// migrate). While it is open it holds the file's leader lock, so no scheduler starts leading
// on the file during the copy. Close releases both.
type Export struct {
	// DB reads the file (query_only; foreign keys are irrelevant to reads).
	DB *sql.DB
	// Version is the file's schema version (PRAGMA user_version; SchemaVersion numbers alike).
	Version int
	leader  *leaderLock
}

// OpenExport opens the existing store file at path read-only. It refuses a missing file
// (os.ErrNotExist, with the path), and a file a live scheduler leads: a *LeadingError when
// another process holds the leader lock (flock on <path>-leader), or, where flock does not
// exist, the leader lease has not run out.
func OpenExport(ctx context.Context, path string) (*Export, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("storage: no store at %s: %w", abs, err)
	}
	db, err := sql.Open("sqlite", "file:"+abs+"?mode=ro&_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", abs, err)
	}
	e := &Export{DB: db, leader: newLeaderLock(abs)}
	if err := e.check(ctx); err != nil {
		return nil, errors.Join(err, e.Close())
	}
	return e, nil
}

// check reads the schema version and refuses a led file (see OpenExport).
func (e *Export) check(ctx context.Context) error {
	if err := e.DB.QueryRowContext(ctx, "PRAGMA user_version").Scan(&e.Version); err != nil {
		return fmt.Errorf("storage: read schema version: %w", err)
	}
	held, err := e.leader.try()
	if err != nil {
		return err
	}
	var le LeadingError
	var expires int64
	err = e.DB.QueryRowContext(ctx, "SELECT owner, epoch, expires_at FROM leader WHERE id = 1").Scan(&le.Owner, &le.Epoch, &expires)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("storage: read leader: %w", err)
	}
	le.ExpiresAt = time.UnixMilli(expires)
	leading := le.Owner != "" && le.ExpiresAt.After(time.Now()) // a lease a stopped leader left may still run
	if leaderLockProves {
		leading = !held // the kernel dropped a dead leader's lock
	}
	if leading {
		return &le
	}
	return nil
}

// Close releases the leader lock and closes the database.
func (e *Export) Close() error { return errors.Join(e.DB.Close(), e.leader.close()) }
