package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ErrSchemaMismatch: the SQLite store's schema version is not this binary's PostgreSQL one;
// the message says which mcp-scheduler to run.
var ErrSchemaMismatch = errors.New("schema versions differ")

// ErrTargetNotEmpty: the PostgreSQL database already holds a store; ImportSQLite copies only
// into an empty one.
var ErrTargetNotEmpty = errors.New("the PostgreSQL database is not empty")

// ErrImportMismatch: after the copy a table's row count, or a counter table, disagrees; the
// transaction was rolled back.
var ErrImportMismatch = errors.New("the copy does not match the SQLite store")

// importTables are the schema's tables in an order that respects the foreign keys (voyages
// before missions, missions before what refers to them). The counter tables come last: the
// triggers fill them while the rows are copied, and they are then replaced by the SQLite
// rows and checked against the rows (verifyCounters). ImportSQLite refuses a schema with a
// table missing here, so a new table cannot be left behind.
var importTables = []string{
	"voyages", "missions", "dependencies", "write_areas", "attempts", "workspaces", "landings",
	"waves", "escalations", "agents", "events", "scheduler", "leader", "holds", "notice_cursor",
	"notices", "rate_windows", "usage_running", "spend_daily", "nodes", "landing_locks",
	"mission_counts", "voyage_counts", "attempt_outcomes",
}

// replacedTables hold rows before the copy (seeded by the schema, or filled by triggers
// during it): they are emptied right before their SQLite rows are copied.
var replacedTables = map[string]bool{
	"scheduler": true, "leader": true, "notice_cursor": true,
	"mission_counts": true, "voyage_counts": true, "attempt_outcomes": true,
}

// TableCount is one table's row count on both sides of an import.
type TableCount struct {
	Table    string `json:"table"`
	SQLite   int64  `json:"sqlite"`
	Postgres int64  `json:"postgres"`
}

// ImportReport is what ImportSQLite copied: the schema version and the rows per table, in
// importTables order.
type ImportReport struct {
	SchemaVersion int          `json:"schema_version"`
	Tables        []TableCount `json:"tables"`
}

// ImportSQLite copies a whole SQLite store (src: the file opened read-only, e.g. by
// storage.OpenExport) into the empty PostgreSQL database at url. It migrates the database
// (Migrate), then in ONE transaction: locks every table, refuses a database holding rows
// (ErrTargetNotEmpty, naming the tables), copies every table with COPY from one read
// snapshot of src, moves the identity sequences past the copied ids, and verifies the row
// counts and counter tables (ErrImportMismatch): any error rolls everything back. A schema
// version other than SchemaVersion is refused first (ErrSchemaMismatch). Errors never show
// the URL's password. The report is filled as far as the counts got, also on a mismatch.
func ImportSQLite(ctx context.Context, src *sql.DB, url string, log *slog.Logger) (ImportReport, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rep := ImportReport{SchemaVersion: SchemaVersion()}
	if err := checkSourceVersion(ctx, src); err != nil {
		return rep, err
	}
	pool, err := connect(ctx, url, -1, log, nil) // one try: a person runs migrate and sees why
	if err != nil {
		return rep, err
	}
	defer pool.Close()
	if err := Migrate(ctx, pool, log); err != nil {
		return rep, err
	}
	stx, err := src.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return rep, fmt.Errorf("sqlite: begin: %w", err)
	}
	defer func() { _ = stx.Rollback() }()
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		im := importer{src: stx, dst: tx, log: log}
		return im.run(ctx, &rep)
	})
	return rep, err
}

// checkSourceVersion refuses a SQLite schema this binary's PostgreSQL schema is not.
func checkSourceVersion(ctx context.Context, src *sql.DB) error {
	var v int
	if err := src.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("sqlite: read schema version: %w", err)
	}
	want := SchemaVersion()
	switch {
	case v < want:
		return fmt.Errorf("%w: the SQLite store is at schema %d, this mcp-scheduler writes schema %d: run this mcp-scheduler on the SQLite store once (mcp-scheduler status migrates it), then migrate again",
			ErrSchemaMismatch, v, want)
	case v > want:
		return fmt.Errorf("%w: the SQLite store is at schema %d, newer than this mcp-scheduler's PostgreSQL schema %d: run migrate with the mcp-scheduler that wrote the store (or a newer one)",
			ErrSchemaMismatch, v, want)
	}
	return nil
}

// hidePassword removes the URL's password from a message (pgx quotes a bad URL in its parse
// errors): the whole URL, and the password itself wherever it appears, found even in a URL
// that does not parse.
func hidePassword(msg, url string) string {
	if strings.TrimSpace(url) == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, url, SafeURL(url))
	if m := passwordInURL.FindStringSubmatch(url); m != nil && m[1] != "" {
		msg = strings.ReplaceAll(msg, m[1], "xxxxx")
	}
	return msg
}

// passwordInURL finds the password of scheme://user:password@host.
var passwordInURL = regexp.MustCompile(`://[^:/@]*:([^@]*)@`)

// importer is one import's two transactions: the SQLite snapshot and the PostgreSQL copy.
type importer struct {
	src *sql.Tx
	dst pgx.Tx
	log *slog.Logger
}

func (im importer) run(ctx context.Context, rep *ImportReport) error {
	if err := im.checkTables(ctx); err != nil {
		return err
	}
	if _, err := im.dst.Exec(ctx, "SET LOCAL lock_timeout = '30s'"); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if _, err := im.dst.Exec(ctx, "LOCK TABLE "+strings.Join(importTables, ", ")+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		return fmt.Errorf("postgres: lock the tables (waited 30 s: does a scheduler run on this database? stop it, or give another database): %w", err)
	}
	if err := im.checkEmpty(ctx); err != nil {
		return err
	}
	for _, t := range importTables {
		if err := im.copyTable(ctx, t); err != nil {
			return err
		}
	}
	if err := im.setSequences(ctx); err != nil {
		return err
	}
	if err := im.verify(ctx, rep); err != nil {
		return err
	}
	return im.verifyCounters(ctx)
}

// checkTables refuses schemas whose tables are not exactly importTables on both sides.
func (im importer) checkTables(ctx context.Context) error {
	pg, err := pgList(ctx, im.dst, `SELECT table_name FROM information_schema.tables
WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'schema_version'`)
	if err != nil {
		return fmt.Errorf("postgres: list tables: %w", err)
	}
	lite, err := sqliteList(ctx, im.src, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return fmt.Errorf("sqlite: list tables: %w", err)
	}
	for side, names := range map[string][]string{"PostgreSQL": pg, "SQLite": lite} {
		for _, n := range names {
			if !slices.Contains(importTables, n) {
				return fmt.Errorf("the %s schema has table %s, which this mcp-scheduler does not know how to copy: use the mcp-scheduler that wrote the store", side, n)
			}
		}
		for _, n := range importTables {
			if !slices.Contains(names, n) {
				return fmt.Errorf("the %s schema has no table %s: the schemas differ; use the mcp-scheduler that wrote the store", side, n)
			}
		}
	}
	return nil
}

// checkEmpty refuses a database holding a store: any row outside the seeded tables.
func (im importer) checkEmpty(ctx context.Context) error {
	var full []string
	for _, t := range importTables {
		if replacedTables[t] {
			continue
		}
		var any bool
		if err := im.dst.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+t+")").Scan(&any); err != nil {
			return fmt.Errorf("postgres: %s: %w", t, err)
		}
		if any {
			full = append(full, t)
		}
	}
	if len(full) > 0 {
		return fmt.Errorf("%w: its tables %s hold rows; migrate copies a store only into an empty database: create a new one (CREATE DATABASE …) and give its URL, or drop this one's store first",
			ErrTargetNotEmpty, strings.Join(full, ", "))
	}
	return nil
}

// pgList returns the first column of a PostgreSQL query's rows.
func pgList(ctx context.Context, q pgx.Tx, sql string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// sqliteList returns the first column of a SQLite query's rows.
func sqliteList(ctx context.Context, q *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
