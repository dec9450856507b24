//go:build unix

package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// OpenExport refuses a file whose leader lock another handle holds, opens it once the lock is
// released, and holds the lock itself meanwhile, so no scheduler starts leading on it.
func TestOpenExport_RefusesALedFileAndHoldsTheLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mcp-scheduler.db")
	s, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	held, err := s.TryLeaderLock()
	require.NoError(t, err)
	require.True(t, held)

	_, err = OpenExport(ctx, path)
	require.ErrorIs(t, err, ErrLeading)
	var le *LeadingError
	require.True(t, errors.As(err, &le))

	require.NoError(t, s.ReleaseLeaderLock())
	ex, err := OpenExport(ctx, path)
	require.NoError(t, err)
	require.Equal(t, SchemaVersion(), ex.Version)
	held, err = s.TryLeaderLock()
	require.NoError(t, err)
	require.False(t, held, "the export holds the leader lock while it is open")
	_, err = ex.DB.ExecContext(ctx, "DELETE FROM missions")
	require.Error(t, err, "the export is read-only")
	require.NoError(t, ex.Close())
	held, err = s.TryLeaderLock()
	require.NoError(t, err)
	require.True(t, held, "Close released the lock")
}

func TestOpenExport_MissingFileSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.db")
	_, err := OpenExport(context.Background(), path)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, path)
	_, statErr := os.Stat(path)
	require.ErrorIs(t, statErr, os.ErrNotExist, "nothing was created")
}
