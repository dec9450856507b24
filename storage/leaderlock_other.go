//go:build !unix

package storage

// leaderLock never proves anything where flock(2) does not exist: a successor waits for the
// leader lease to expire (see leaderlock_unix.go).
type leaderLock struct{}

// leaderLockProves: try never succeeds here, so a lock not taken proves nothing (OpenExport).
const leaderLockProves = false

func newLeaderLock(string) *leaderLock { return &leaderLock{} }
func (*leaderLock) try() (bool, error) { return false, nil }
func (*leaderLock) close() error       { return nil }
func (*leaderLock) release() error     { return nil }
