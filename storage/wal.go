package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// Defaults of the WAL bounds (Options.WALLimit, Options.WALCheckEvery).
const (
	// DefaultWALLimit is the size the -wal file is brought back under: SQLite's
	// journal_size_limit, and the threshold of the idle truncation.
	DefaultWALLimit = 64 << 20
	// DefaultWALCheckEvery is how often the store looks at the -wal file's size.
	DefaultWALCheckEvery = 15 * time.Second
)

// walPath and shmPath are SQLite's companion files of the database at path.
func walPath(path string) string { return path + "-wal" }
func shmPath(path string) string { return path + "-shm" }

// createPrivate makes sure the database file exists with mode 0600 before SQLite opens it:
// SQLite creates the -wal and -shm files with the database file's permissions, so a file
// SQLite created itself (0644 under the usual umask) gave them to everyone on the machine.
// The companions of an existing database (older versions) are restricted too.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("storage: create %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("storage: create %s: %w", path, err)
	}
	for _, p := range []string{path, walPath(path), shmPath(path)} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("storage: restrict %s: %w", p, err)
		}
	}
	return nil
}

// walKeeper brings the -wal file back under the limit once nothing needs its frames.
//
// SQLite restarts the WAL from its beginning after a checkpoint that copied every frame, and
// journal_size_limit then truncates the file to the limit — but only at the next write, and
// never while a reader (of any process) still reads an old snapshot from it. A long outside
// reader therefore left a WAL of 100 MB that stayed until the process ended when no more
// writes came. The keeper looks at the file's size every checkEvery and, when it is over
// the limit, runs a TRUNCATE checkpoint on the watcher connection with no busy wait: with a
// reader still in the WAL it only copies what it can and reports busy (tried again next
// time); once the reader is gone the file is emptied. It never waits for a lock, so the
// writer and readers are held at most for the copy itself.
func (s *Store) walKeeper(limit int64, checkEvery time.Duration) {
	defer close(s.walDone)
	t := time.NewTicker(checkEvery)
	defer t.Stop()
	for {
		select {
		case <-s.walQuit:
			return
		case <-t.C:
			if err := s.trimWAL(context.Background(), limit); err != nil {
				s.log.Warn("WAL truncation", "path", walPath(s.path), "err", err)
			}
		}
	}
}

// trimWAL truncates the -wal file when it is larger than limit and no reader needs it.
func (s *Store) trimWAL(ctx context.Context, limit int64) error {
	st, err := os.Stat(walPath(s.path))
	if errors.Is(err, os.ErrNotExist) || (err == nil && st.Size() <= limit) {
		return nil
	}
	if err != nil {
		return err
	}
	busy, frames, copied, err := s.checkpointTruncate(ctx)
	if err != nil {
		return err
	}
	if busy != 0 {
		s.log.Debug("WAL over its limit, still read by another connection; retrying", "bytes", st.Size(),
			"limit", limit, "frames", frames, "checkpointed", copied)
		return nil
	}
	s.log.Info("WAL truncated", "path", walPath(s.path), "bytes_before", st.Size(), "limit", limit)
	return nil
}

// checkpointTruncate runs PRAGMA wal_checkpoint(TRUNCATE) on the watcher connection with
// busy_timeout 0 for the duration (restored after), and returns SQLite's three numbers: busy
// (1: a reader or writer prevented completion), WAL frames, frames checkpointed.
func (s *Store) checkpointTruncate(ctx context.Context) (busy, frames, copied int, err error) {
	s.versionMu.Lock()
	defer s.versionMu.Unlock()
	var prev int
	if err = s.version.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&prev); err != nil {
		return 0, 0, 0, fmt.Errorf("read busy_timeout: %w", err)
	}
	if _, err = s.version.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		if _, rerr := s.version.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout = %d", prev)); rerr != nil && err == nil {
			err = rerr
		}
	}()
	err = s.version.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &copied)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("wal_checkpoint: %w", err)
	}
	return busy, frames, copied, nil
}
