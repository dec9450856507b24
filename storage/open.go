package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Options configure Open. Zero values take the defaults.
type Options struct {
	// FullSync sets synchronous=FULL (fsync on every commit); the default is NORMAL.
	FullSync bool
	// BusyTimeout is how long a connection waits for another process's lock (default 10s).
	BusyTimeout time.Duration
	// Readers is the size of the read pool (default 4).
	Readers int
	// MaxBatch caps how many Updates share one transaction (default 64; 1 disables group commit).
	MaxBatch int
	// WALLimit is the size in bytes the -wal file is brought back under: SQLite's
	// journal_size_limit, and the threshold above which the store truncates the WAL once no
	// reader needs it (default DefaultWALLimit, 64 MiB).
	WALLimit int64
	// WALCheckEvery is how often the -wal file's size is checked (default
	// DefaultWALCheckEvery; negative: never, leaving only journal_size_limit).
	WALCheckEvery time.Duration
	// CheckpointEvery is how often committed WAL frames are copied into the database file,
	// off the commit path (default DefaultCheckpointEvery, 200 ms; checkpoint.go says why).
	CheckpointEvery time.Duration
	Logger          *slog.Logger
	// Trace, when set, is called with the text and arguments of every statement a transaction runs, before
	// it runs (from the goroutine leading the writer and from readers at once: it must be safe for
	// concurrent use). For debugging and for the query-plan tests; nil costs nothing.
	Trace func(query string, args []any)
}

// Store is an open SQLite database implementing engine.Store. It is safe for concurrent use.
type Store struct {
	path    string
	writeDB *sql.DB
	readDB  *sql.DB
	w       *writer
	readers *stmtCache
	// version is a dedicated connection for PRAGMA data_version (per-connection value).
	versionMu sync.Mutex
	version   *sql.Conn
	log       *slog.Logger
	ckpt      *checkpointer // the background WAL checkpoint (checkpoint.go)
	walQuit   chan struct{} // stops the WAL keeper
	walDone   chan struct{} // closed when it stopped
	trace     func(query string, args []any)
	changes   changeSubs // Changes subscribers, signalled by other handles' commits
	leader    *leaderLock
	closeOnce sync.Once
	closeErr  error
}

var _ engine.Store = (*Store)(nil)

// Open opens (creating if needed) the database file at path, applies migrations and starts
// the writer. The file, its -wal and -shm companions and its directory are private to the
// user (0700 dir, 0600 files). A keeper goroutine bounds the -wal file (Options.WALLimit).
func Open(ctx context.Context, path string, opt Options) (*Store, error) {
	opt = opt.withDefaults()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	if strings.ContainsAny(abs, "?#") {
		return nil, fmt.Errorf("storage: database path %q contains ? or #; choose a data dir without them", abs)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("storage: create data dir: %w", err)
	}
	if err := createPrivate(abs); err != nil {
		return nil, err
	}
	s := &Store{path: abs, log: opt.Logger, trace: opt.Trace, leader: newLeaderLock(abs)}
	if err := s.openPools(ctx, opt); err != nil {
		return nil, err
	}
	if opt.WALCheckEvery > 0 {
		s.walQuit, s.walDone = make(chan struct{}), make(chan struct{})
		go s.walKeeper(opt.WALLimit, opt.WALCheckEvery)
	}
	return s, nil
}

// startCheckpointer turns the writer's auto-checkpoint off and starts the background
// checkpoint on a connection of its own (checkpoint.go says why).
func (s *Store) startCheckpointer(ctx context.Context, writer *sql.Conn, opt Options) error {
	c, err := s.writeDB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("storage: open %s: %w", s.path, err)
	}
	if _, err := writer.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
		_ = c.Close()
		return fmt.Errorf("storage: %s: wal_autocheckpoint: %w", s.path, err)
	}
	s.ckpt = &checkpointer{conn: c, every: opt.CheckpointEvery, quit: make(chan struct{}), done: make(chan struct{}),
		log: func(msg string, args ...any) { s.log.Warn(msg, append(args, "path", s.path)...) }}
	go s.ckpt.run()
	return nil
}

func (o Options) withDefaults() Options {
	if o.BusyTimeout == 0 {
		o.BusyTimeout = 10 * time.Second
	}
	if o.Readers == 0 {
		o.Readers = 4
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = 64
	}
	if o.WALLimit <= 0 {
		o.WALLimit = DefaultWALLimit
	}
	if o.WALCheckEvery == 0 {
		o.WALCheckEvery = DefaultWALCheckEvery
	}
	if o.CheckpointEvery <= 0 {
		o.CheckpointEvery = DefaultCheckpointEvery
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func dsn(path string, opt Options, write bool) string {
	sync := "NORMAL"
	if opt.FullSync {
		sync = "FULL"
	}
	// Each pragma once: modernc applies busy_timeout first, then the rest sorted by name.
	q := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=journal_size_limit(%d)&_pragma=synchronous(%s)",
		opt.BusyTimeout.Milliseconds(), opt.WALLimit, sync)
	if !write {
		q += "&_pragma=query_only(1)"
	} else {
		// The writer's group commit wraps each Update in a savepoint; with temp_store FILE
		// SQLite spills the savepoints' sub-journal past 64 KiB to a temporary file (a pwrite
		// per page: 16 % of the writer's CPU in BenchmarkAcquireCompleteVsRiver). In memory it
		// never touches the disk; it lives for one transaction.
		q += "&_pragma=temp_store(2)"
	}
	return "file:" + path + "?" + q
}

// openPools opens the connections and migrates, under the writers' cross-process lock
// (proclock_unix.go), as a write transaction runs: the first connection turns a new file to
// WAL and the migrations are a run of write transactions, and a second process opening the
// same data dir at that moment (a daemon starting while `status` polls) would otherwise wait
// in SQLite's busy handler, whose polling a busy process outruns for longer than busy_timeout
// (seen at load 50: `status` failed with SQLITE_BUSY while a daemon started). With the lock
// the second process sleeps in the kernel until the first has opened.
func (s *Store) openPools(ctx context.Context, opt Options) error {
	plock, err := openProcLock(s.path)
	if err != nil {
		return err
	}
	if err := plock.lock(); err != nil {
		_ = plock.close()
		return fmt.Errorf("storage: open %s: writer lock: %w", s.path, err)
	}
	err = s.openLocked(ctx, opt, plock)
	uerr := plock.unlock()
	switch {
	case err != nil:
		_ = plock.close()
		return err
	case uerr != nil:
		_ = s.Close() // the writer holds plock now, and closes it
		return fmt.Errorf("storage: open %s: writer lock: %w", s.path, uerr)
	}
	return nil
}

// openLocked is openPools' work, while it holds plock.
func (s *Store) openLocked(ctx context.Context, opt Options, plock *procLock) error {
	var err error
	if s.writeDB, err = sql.Open("sqlite", dsn(s.path, opt, true)); err != nil {
		return fmt.Errorf("storage: open %s: %w", s.path, err)
	}
	s.writeDB.SetMaxOpenConns(3) // the writer's connection, the data_version watcher, the checkpointer
	s.writeDB.SetConnMaxLifetime(0)
	s.writeDB.SetConnMaxIdleTime(0)
	conn, err := s.writeDB.Conn(ctx)
	if err != nil {
		_ = s.writeDB.Close()
		return fmt.Errorf("storage: open %s: %w", s.path, err)
	}
	if err := migrate(ctx, conn, s.log); err != nil {
		_ = conn.Close()
		_ = s.writeDB.Close()
		return err
	}
	if s.version, err = s.writeDB.Conn(ctx); err != nil {
		_ = conn.Close()
		_ = s.writeDB.Close()
		return fmt.Errorf("storage: open %s: %w", s.path, err)
	}
	if err := s.startCheckpointer(ctx, conn, opt); err != nil {
		_ = conn.Close()
		_ = s.closePools()
		return err
	}
	if s.readDB, err = sql.Open("sqlite", dsn(s.path, opt, false)); err != nil {
		_ = s.closePools()
		return fmt.Errorf("storage: open %s: %w", s.path, err)
	}
	s.readDB.SetMaxOpenConns(opt.Readers)
	s.readDB.SetMaxIdleConns(opt.Readers)
	s.readDB.SetConnMaxLifetime(0)
	s.readDB.SetConnMaxIdleTime(0)
	s.readers = newStmtCache(s.readDB)
	s.w = startWriter(conn, plock, opt, func() { s.ckpt.noteCommit(); s.committed() })
	s.register()
	return nil
}

var _ engine.HostLock = (*Store)(nil)

// TryLeaderLock takes the host's leader lock (flock on <database>-leader) without waiting:
// true when this Store holds it. See engine.HostLock.
func (s *Store) TryLeaderLock() (bool, error) { return s.leader.try() }

// ReleaseLeaderLock gives the host's leader lock up; nothing when not held.
func (s *Store) ReleaseLeaderLock() error { return s.leader.release() }

// Path returns the database file's absolute path.
func (s *Store) Path() string { return s.path }

// Close stops the writer (pending Updates finish first) and closes every connection.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.unregister()
		if s.walQuit != nil {
			close(s.walQuit)
			<-s.walDone
		}
		if s.w != nil {
			s.w.stop()
		}
		if s.ckpt != nil {
			s.ckpt.stop()
		}
		s.closeErr = errors.Join(s.closePools(), s.leader.close())
	})
	return s.closeErr
}

func (s *Store) closePools() error {
	var errs []error
	if s.readers != nil {
		errs = append(errs, s.readers.close())
	}
	if s.version != nil {
		errs = append(errs, s.version.Close())
	}
	if s.ckpt != nil {
		errs = append(errs, s.ckpt.conn.Close())
	}
	if s.readDB != nil {
		errs = append(errs, s.readDB.Close())
	}
	if s.writeDB != nil {
		errs = append(errs, s.writeDB.Close())
	}
	return errors.Join(errs...)
}

// DataVersion returns SQLite's data_version for this process's watcher connection: it
// changes when another connection (any process) commits. Cheap (no I/O beyond a shared-memory
// read in WAL mode).
func (s *Store) DataVersion(ctx context.Context) (int64, error) {
	s.versionMu.Lock()
	defer s.versionMu.Unlock()
	var v int64
	if err := s.version.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("storage: data_version: %w", err)
	}
	return v, nil
}
