package storage

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrSchemaTooNew: the database was written by a newer mcp-scheduler. Use that version, or a
// fresh data dir.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations sorted by version. Names are NNNN_name.sql with
// versions 1, 2, 3, … without gaps.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
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
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, i+1)
		}
	}
	return out, nil
}

// SchemaVersion is the newest schema this binary knows.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		panic(err) // embedded files are fixed at build time; a test covers them
	}
	return len(ms)
}

// migrate applies every migration newer than the database's user_version, each in its own
// IMMEDIATE transaction together with the version bump, and refuses a newer database. Each
// step is logged at debug; a run that applied any logs one info line, "migrated database from
// schema A to B" (a fresh database: from 0 to the newest).
func migrate(ctx context.Context, conn *sql.Conn, log *slog.Logger) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	from := -1
	for {
		var have int
		if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
			return fmt.Errorf("storage: read schema version: %w", err)
		}
		if have > len(ms) {
			return fmt.Errorf("storage: %w: the database is at version %d, this binary knows up to %d; run the newer mcp-scheduler or use another data dir",
				ErrSchemaTooNew, have, len(ms))
		}
		if from < 0 {
			from = have
		}
		if have == len(ms) {
			if have > from {
				log.Info(fmt.Sprintf("migrated database from schema %d to %d", from, have), "from", from, "to", have)
			}
			return nil
		}
		if err := apply(ctx, conn, ms[have], have); err != nil {
			return err
		}
		log.Debug("schema migration step", "version", ms[have].version, "name", ms[have].name)
	}
}

// apply runs one migration if the version is still from (another process may have migrated
// meanwhile: the version is checked again under the write lock).
func apply(ctx context.Context, conn *sql.Conn, m migration, from int) error {
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("storage: migrate to %d: %w", m.version, err)
	}
	err := func() error {
		var now int
		if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&now); err != nil {
			return err
		}
		if now != from {
			return nil
		}
		if _, err := conn.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		_, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version))
		return err
	}()
	if err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return fmt.Errorf("storage: migrate to %d: %w", m.version, err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("storage: migrate to %d: commit: %w", m.version, err)
	}
	return nil
}
