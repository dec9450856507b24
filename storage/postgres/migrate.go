package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrSchemaTooNew: the database was written by a newer mcp-scheduler. Use that version, or
// another database.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

// migrateLock is the transaction-level advisory lock key that serialises migrations of one
// database across processes ("mcpsched" in ASCII).
const migrateLock int64 = 0x6d63707363686564

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations sorted by version. Names are NNNN_name.sql. The
// first file brings an empty database to its own version (0015: the SQLite schema 1..15 in
// one file, so both backends number a schema alike); each later file is the next version.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", e.Name())
		}
		body, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if i > 0 && m.version != out[i-1].version+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, out[i-1].version+1)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no migrations embedded")
	}
	return out, nil
}

// SchemaVersion is the newest schema this binary knows (the same number as the SQLite
// backend's storage.SchemaVersion for the same tables).
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		panic(err) // embedded files are fixed at build time; a test covers them
	}
	return ms[len(ms)-1].version
}

// Migrate brings the database to SchemaVersion, each migration in its own transaction with
// its version bump under an advisory lock (concurrent processes migrate once), and refuses a
// database at a newer version with ErrSchemaTooNew. The version is the one row of
// schema_version (absent: an empty database, version 0).
func Migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	for {
		done, err := migrateOne(ctx, pool, ms, log)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next migration, or reports done when the database is current.
func migrateOne(ctx context.Context, pool *pgxpool.Pool, ms []migration, log *slog.Logger) (done bool, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLock); err != nil {
			return err
		}
		have, err := schemaVersion(ctx, tx)
		if err != nil {
			return err
		}
		newest := ms[len(ms)-1].version
		if have > newest {
			return fmt.Errorf("%w: the database is at version %d, this binary knows up to %d; run the newer mcp-scheduler or use another database",
				ErrSchemaTooNew, have, newest)
		}
		if have == newest {
			done = true
			return nil
		}
		m := next(ms, have)
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, "UPDATE schema_version SET version = $1", m.version); err != nil {
			return fmt.Errorf("%s: version bump: %w", m.name, err)
		}
		log.Info("schema migrated", "version", m.version, "name", m.name)
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("postgres: migrate: %w", err)
	}
	return done, nil
}

// next is the migration to apply to a database at version have (0: the first file).
func next(ms []migration, have int) migration {
	for _, m := range ms {
		if m.version > have {
			return m
		}
	}
	return ms[len(ms)-1] // unreachable: have < newest
}

// schemaVersion reads the version, creating schema_version at 0 in an empty database.
func schemaVersion(ctx context.Context, tx pgx.Tx) (int, error) {
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
  one     BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
  version INTEGER NOT NULL)`); err != nil {
		return 0, fmt.Errorf("schema_version: %w", err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO schema_version (version) VALUES (0) ON CONFLICT DO NOTHING"); err != nil {
		return 0, fmt.Errorf("schema_version: %w", err)
	}
	var v int
	if err := tx.QueryRow(ctx, "SELECT version FROM schema_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}
