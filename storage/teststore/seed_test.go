package teststore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/storage"
)

// schema lists a database file's tables, indexes and triggers with their SQL, and its
// user_version.
func schema(t *testing.T, path string) (map[string]string, int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT type || ' ' || name, coalesce(sql, '') FROM sqlite_master`)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		require.NoError(t, rows.Scan(&k, &v))
		out[k] = v
	}
	require.NoError(t, rows.Err())
	var version int
	require.NoError(t, db.QueryRow(`PRAGMA user_version`).Scan(&version))
	return out, version
}

// A seeded store is the same database a fresh migration makes: same schema objects with the
// same SQL, same schema version (the copy must never drift from the migrations).
func TestSeed_IsAFreshMigration(t *testing.T) {
	t.Setenv(Env, "")
	ctx := context.Background()
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	s, err := storage.Open(ctx, fresh, storage.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	seeded := Location(t)
	require.NoError(t, OpenAt(t, seeded).Close())
	want, wantV := schema(t, fresh)
	got, gotV := schema(t, seeded)
	require.NotEmpty(t, want)
	require.Equal(t, want, got)
	require.Equal(t, wantV, gotV)
}
