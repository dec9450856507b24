// Package teststore is the one place the engine's and the scheduler's tests get a store: the
// backend named by MCP_SCHEDULER_TEST_STORE ("sqlite", the default, or "postgres"), opened
// through the engine's Store seam, so that the same engine and scheduler tests run on both
// backends; the tests themselves name no backend. Only tests import this package.
//
// A store is named by a location string: what a test hands to a helper process, or opens
// again after closing a store, to reach the same database. On SQLite it is the database
// file's path; on PostgreSQL the URL of a database of its own on the server
// MCP_SCHEDULER_TEST_DATABASE_URL names (postgres.go).
package teststore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
)

// Env names the backend the tests run against.
const Env = "MCP_SCHEDULER_TEST_STORE"

// SQLite is the SQLite backend's name (storage.Open).
const SQLite = "sqlite"

// Backend returns the backend tests run against: $MCP_SCHEDULER_TEST_STORE, or SQLite.
func Backend() string {
	if b := os.Getenv(Env); b != "" {
		return b
	}
	return SQLite
}

// LocationIn returns the location of the store kept with data dir dir (SQLite: the file
// scheduler.db in it, where the server keeps it; PostgreSQL: a database named after dir).
func LocationIn(dir string) string {
	if Backend() == Postgres {
		return pgLocation(dir)
	}
	return filepath.Join(dir, "scheduler.db")
}

// Location returns a fresh location for t, in a new t.TempDir() (PostgreSQL: its database is
// dropped when t ends).
func Location(t testing.TB) string {
	dir := t.TempDir()
	if Backend() == Postgres {
		t.Cleanup(func() { require.NoError(t, pgDrop(dir)) })
	}
	return LocationIn(dir)
}

// Open opens the store at loc, creating and migrating it when new. The error names the
// variable to fix when the backend is unknown.
//
// A new SQLite location starts as a copy of a database migrated once per test process (see
// SeedSQLite), so that a test does not pay for running every migration again: under the race
// detector on a loaded machine a fresh migration takes about 2 s, a copy a few milliseconds.
// storage's own tests open fresh files and exercise the migrations themselves.
func Open(ctx context.Context, loc string) (engine.Store, error) {
	switch b := Backend(); b {
	case SQLite:
		if err := SeedSQLite(ctx, loc); err != nil {
			return nil, err
		}
		s, err := storage.Open(ctx, loc, storage.Options{})
		if err != nil {
			return nil, err
		}
		return s, nil
	case Postgres:
		if err := pgCreate(ctx, loc); err != nil {
			return nil, err
		}
		return postgres.Open(ctx, loc, postgres.Options{})
	default:
		return nil, fmt.Errorf("teststore: %s=%q is not a known test store; set it to %q, %q or unset it", Env, b, SQLite, Postgres)
	}
}

// OpenAt opens the store at loc for t and closes it when t ends (a Close error fails t).
func OpenAt(t testing.TB, loc string) engine.Store {
	t.Helper()
	s, err := Open(context.Background(), loc)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// New returns a fresh, empty store for t, closed when t ends.
func New(t testing.TB) engine.Store { return OpenAt(t, Location(t)) }

// Remove deletes the store kept with data dir dir (LocationIn(dir)), which must be closed:
// SQLite's file and its -wal and -shm companions, or PostgreSQL's database. For tests that
// make many stores in one test (property checks) and must not keep them all.
func Remove(dir string) error {
	if Backend() == Postgres {
		return pgDrop(dir)
	}
	loc := LocationIn(dir)
	var errs []error
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(loc + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
