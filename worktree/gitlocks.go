package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// gitLocks deals with git's own lock files (index.lock, refs/heads/x.lock) that a killed git
// process left behind (bug case B16). A lock is removed only when it is provably stale: its
// mtime is older than staleAge and no live process has it open. Otherwise the command is
// retried with backoff until wait runs out, and then ErrLockBusy is returned with the lock
// left in place.
type gitLocks struct {
	staleAge time.Duration
	wait     time.Duration
	now      func() time.Time
	log      *slog.Logger
	// held reports whether a live process has path open; known is false where that cannot be
	// determined (no /proc and no lsof).
	held func(path string) (held, known bool)
}

// lockExists matches git's message for a lock file that already exists, for the index and
// for refs alike: "Unable to create '/r/.git/index.lock': File exists."
var lockExists = regexp.MustCompile(`Unable to create '([^']+\.lock)': File exists`)

// lockInError returns the lock path named in a git failure, or "".
func lockInError(err error) string {
	if m := lockExists.FindStringSubmatch(stderrOf(err)); m != nil {
		return m[1]
	}
	return ""
}

// retry runs fn until it succeeds, fails for a reason other than an existing lock file, or
// the lock stays held longer than l.wait. Stale locks are removed on the way. fn must be safe
// to repeat after a lock failure (git checks its lock before changing anything).
func (l *gitLocks) retry(ctx context.Context, fn func() error) error {
	deadline := l.now().Add(l.wait)
	backoff := 20 * time.Millisecond
	for removals := 0; ; {
		err := fn()
		lock := lockInError(err)
		if lock == "" {
			return err
		}
		removed, rmErr := l.removeIfStale(lock)
		if rmErr != nil {
			return fmt.Errorf("%w (%v)", err, rmErr)
		}
		if removed && removals < 100 {
			removals++
			continue
		}
		if l.now().After(deadline) {
			return fmt.Errorf("%w: %s still held after %s: %w", ErrLockBusy, lock, l.wait, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", lock, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Second)
	}
}

// clearIfStale removes path when it is a stale lock; it reports whether a lock remains.
func (l *gitLocks) clearIfStale(path string) (stillLocked bool, err error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	removed, err := l.removeIfStale(path)
	return !removed, err
}

// removeIfStale deletes path if it is stale and reports whether it did (a lock that vanished
// meanwhile counts as removed).
func (l *gitLocks) removeIfStale(path string) (bool, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("stat lock %s: %w", path, err)
	}
	age := l.now().Sub(st.ModTime())
	held, known := l.held(path)
	minAge := l.staleAge
	if !known {
		minAge = max(6*l.staleAge, time.Minute)
	}
	if held || age < minAge {
		return false, nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("remove stale lock %s: %w", path, err)
	}
	l.log.Warn("removed stale git lock", "path", path, "age_s", age.Seconds())
	return true, nil
}

// processHoldsFile is the default holder check: it resolves path and asks the platform.
func processHoldsFile(path string) (held, known bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	return openByAnyProcess(real)
}
