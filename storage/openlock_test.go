package storage

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// Two processes opening one new data dir at once (a daemon starting while `status` polls):
// the second waits for the first to have opened and migrated, asleep on the writers' lock,
// instead of polling in SQLite's busy handler, which a migrating process outran past
// busy_timeout at load 50 (`status` failed with SQLITE_BUSY). Here the first process is a
// holder of that lock for as long as the test likes, and busy_timeout is 100 ms: Open still
// waits, then opens.
func TestOpen_WaitsWhileAnotherProcessOpensTheDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-scheduler.db")
	holder, err := openProcLock(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = holder.close() })
	require.NoError(t, holder.lock())

	opened := make(chan error, 1)
	go func() {
		s, err := Open(context.Background(), path, Options{BusyTimeout: 100 * time.Millisecond})
		if err == nil {
			err = s.Close()
		}
		opened <- err
	}()
	testenv.WaitFor(t, "Open to wait for the writers' lock", func() bool {
		return testenv.GoroutinesIn("storage.(*Store).openPools(", "storage.(*procLock).lock(") == 1
	})
	select {
	case err := <-opened:
		t.Fatalf("Open returned while another process held the writers' lock: %v", err)
	default:
	}
	require.NoError(t, holder.unlock())
	err, _ = testenv.Receive(t, "Open to return once the lock is free", opened)
	require.NoError(t, err)
}
