package postgres

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/storage"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), testenv.WaitDeadline(t))
	t.Cleanup(cancel)
	return ctx
}

func newPool(t *testing.T, ctx context.Context) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestSchemaVersion_MatchesSQLite(t *testing.T) {
	if got, want := SchemaVersion(), storage.SchemaVersion(); got != want {
		t.Fatalf("postgres schema version %d, SQLite %d: translate the new SQLite migrations into storage/postgres/migrations", got, want)
	}
}

// TestMigrate_ConcurrentOnce: several processes' worth of migrators on one empty database
// end at the newest version without an error (the advisory lock lets one apply each step).
func TestMigrate_ConcurrentOnce(t *testing.T) {
	ctx := testCtx(t)
	pool := newPool(t, ctx)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = Migrate(ctx, pool, quiet) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var v int
	if err := pool.QueryRow(ctx, "SELECT version FROM schema_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion() {
		t.Fatalf("version %d after migrate, want %d", v, SchemaVersion())
	}
	if err := Migrate(ctx, pool, quiet); err != nil {
		t.Fatalf("migrating a current database again: %v", err)
	}
}

func TestMigrate_RefusesNewerSchema(t *testing.T) {
	ctx := testCtx(t)
	pool := newPool(t, ctx)
	if err := Migrate(ctx, pool, quiet); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "UPDATE schema_version SET version = $1", SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	err := Migrate(ctx, pool, quiet)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Migrate on a newer database: %v, want ErrSchemaTooNew", err)
	}
}

// TestMigrate_SameTablesAsSQLite: every table and column of the SQLite schema exists in the
// PostgreSQL one, and no other (schema_version aside), so that the seam's SQL can be shared.
func TestMigrate_SameTablesAsSQLite(t *testing.T) {
	ctx := testCtx(t)
	pool := newPool(t, ctx)
	if err := Migrate(ctx, pool, quiet); err != nil {
		t.Fatal(err)
	}
	want := sqliteColumns(t, ctx)
	got := map[string][]string{}
	rows, err := pool.Query(ctx, `SELECT table_name, column_name FROM information_schema.columns
WHERE table_schema = 'public' AND table_name <> 'schema_version' ORDER BY table_name, column_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var tbl, col string
		if err := rows.Scan(&tbl, &col); err != nil {
			t.Fatal(err)
		}
		got[tbl] = append(got[tbl], col)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for tbl, cols := range want {
		if !slices.Equal(got[tbl], cols) {
			t.Errorf("table %s: postgres columns %v, SQLite %v", tbl, got[tbl], cols)
		}
	}
	for tbl := range got {
		if _, ok := want[tbl]; !ok {
			t.Errorf("table %s exists only in postgres", tbl)
		}
	}
}

// sqliteColumns opens a fresh SQLite store (migrated to its newest schema) and returns its
// tables' sorted column names.
func sqliteColumns(t *testing.T, ctx context.Context) map[string][]string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := storage.Open(ctx, path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var tbl, col string
		if err := rows.Scan(&tbl, &col); err != nil {
			t.Fatal(err)
		}
		out[tbl] = append(out[tbl], col)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
