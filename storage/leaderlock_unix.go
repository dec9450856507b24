//go:build unix

package storage

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// leaderLock is an advisory flock(2) on <database>-leader that the scheduler's leader holds
// while it leads (engine.HostLock). The kernel drops it when the holding process dies, even
// by SIGKILL, so a process of the same host that gets it proves the previous leader gone and
// may take the leader lease without waiting out its expiry. The lease row and its epoch stay
// the fence; the lock only tells when waiting is pointless.
type leaderLock struct {
	path   string
	mu     sync.Mutex
	f      *os.File // open while held
	closed bool     // the Store is closed: the lock is never taken again
}

// leaderLockProves: a lock held by another process proves a live leader (OpenExport).
const leaderLockProves = true

func newLeaderLock(dbPath string) *leaderLock { return &leaderLock{path: dbPath + "-leader"} }

// try takes the lock without waiting; true when this Store holds it (now or already).
func (l *leaderLock) try() (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		return true, nil
	}
	if l.closed {
		return false, ErrClosed
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("storage: open leader lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil // another live process holds it
		}
		return false, fmt.Errorf("storage: leader lock %s: %w", l.path, err)
	}
	l.f = f
	return true, nil
}

// close releases the lock for good (Store.Close).
func (l *leaderLock) close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	return l.release()
}

// release gives the lock up (closing the file releases the flock); nothing when not held.
func (l *leaderLock) release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("storage: release leader lock: %w", err)
	}
	return nil
}
