package storage_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage"
	"github.com/mcp-scheduler/mcp-scheduler/storage/storetest"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

var _ engine.HostLock = (*storage.Store)(nil) // the suite's HostLock cases run on SQLite

// TestConformance runs the Store seam's conformance suite on SQLite: every case on its own
// database file in t.TempDir(), a copy of one migrated once (the migrations themselves run at
// every fresh Open of the other storage tests).
func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) engine.Store {
		path := filepath.Join(t.TempDir(), "scheduler.db")
		require.NoError(t, teststore.SeedSQLite(context.Background(), path)) // migrated once, copied per case
		s, err := storage.Open(context.Background(), path, storage.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })
		return s
	})
}

// TestConformanceShared runs the two-handle cases on SQLite: two Stores on one database file,
// as two processes of one host hold it.
func TestConformanceShared(t *testing.T) {
	storetest.ExerciseShared(t, func(t *testing.T) (engine.Store, engine.Store) {
		path := filepath.Join(t.TempDir(), "scheduler.db")
		require.NoError(t, teststore.SeedSQLite(context.Background(), path))
		var out [2]engine.Store
		for i := range out {
			s, err := storage.Open(context.Background(), path, storage.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			out[i] = s
		}
		return out[0], out[1]
	})
}
