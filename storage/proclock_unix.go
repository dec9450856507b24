//go:build unix

package storage

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// procLock serialises write transactions across the processes that share one database, with
// advisory flock(2) locks on two side files, taken around each write transaction.
//
// Why: without it, a writer of another process waits in SQLite's busy handler, which polls
// with sleeps of up to 100 ms. A busy process commits and begins its next transaction within
// microseconds, so a poller almost never finds the lock free: one process keeps the database
// for as long as it has work and the others time out with SQLITE_BUSY. With flock, a waiter
// sleeps in the kernel and is woken at the release.
//
// The kernel does not hand a released flock to a waiter, though: the releaser, still on its
// CPU, usually takes it again first. So a writer first takes the queue lock, then the main
// lock, then releases the queue lock. While one process waits for the main lock it holds
// the queue lock, and the releaser, which must pass the queue lock to lock again, waits
// behind it: the lock goes to the waiter. Others queue on the queue lock.
//
// Writers that do not take these locks (another program on the same file) are still excluded
// by SQLite's own lock and busy_timeout.
type procLock struct{ queue, main *os.File }

func openProcLock(dbPath string) (*procLock, error) {
	var l procLock
	var err error
	if l.queue, err = os.OpenFile(dbPath+"-wqueue", os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("storage: open writer lock: %w", err)
	}
	if l.main, err = os.OpenFile(dbPath+"-wlock", os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		_ = l.queue.Close()
		return nil, fmt.Errorf("storage: open writer lock: %w", err)
	}
	return &l, nil
}

// lock takes the main lock, waiting in line behind other processes.
func (l *procLock) lock() error {
	if err := flock(l.queue, syscall.LOCK_EX); err != nil {
		return err
	}
	err := flock(l.main, syscall.LOCK_EX)
	if uerr := flock(l.queue, syscall.LOCK_UN); err == nil {
		err = uerr
	}
	return err
}

func (l *procLock) unlock() error { return flock(l.main, syscall.LOCK_UN) }

func (l *procLock) close() error { return errors.Join(l.queue.Close(), l.main.Close()) }

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("storage: writer lock %s: %w", f.Name(), err)
		}
		return nil
	}
}
