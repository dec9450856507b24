package storage

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// The writer never checkpoints inside a commit (its auto-checkpoint is off), and the
// background checkpointer keeps the WAL from growing: after thousands of commits the -wal
// file stays within a few auto-checkpoints' worth of pages. Without the checkpointer the WAL
// only grows (every commit appends, nothing copies it back).
func TestCheckpointer_KeepsTheWALSmallOffTheCommitPath(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scheduler.db")
	s, err := Open(ctx, path, Options{CheckpointEvery: 5 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })

	var auto int
	require.NoError(t, s.w.q.conn.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto))
	require.Zero(t, auto, "the writer's commits must not checkpoint")

	var maxWAL int64
	for i := range 4000 {
		require.NoError(t, s.Update(ctx, func(tx engine.Tx) error { return tx.SetPaused(ctx, i%2 == 0) }))
		if i%100 == 99 { // a checkpoint pass runs, as between real ticks
			n := s.ckpt.commits.Load()
			testenv.WaitFor(t, "a checkpoint pass after the last commit", func() bool { return s.ckpt.covered.Load() >= n })
		}
		if st, err := os.Stat(walPath(path)); err == nil {
			maxWAL = max(maxWAL, st.Size())
		}
	}
	// 4,000 commits of at least one 4 KiB page each would be over 16 MiB of WAL if nothing
	// copied it back; SQLite's own auto-checkpoint would have held it near 4 MiB.
	require.Less(t, maxWAL, int64(8<<20), "the WAL grew to %d bytes", maxWAL)
}
