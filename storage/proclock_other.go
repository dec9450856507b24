//go:build !unix

package storage

// procLock is a no-op where flock(2) does not exist: SQLite's own lock and busy_timeout
// still exclude writers of other processes (see proclock_unix.go).
type procLock struct{}

func openProcLock(string) (*procLock, error) { return &procLock{}, nil }
func (*procLock) lock() error                { return nil }
func (*procLock) unlock() error              { return nil }
func (*procLock) close() error               { return nil }
