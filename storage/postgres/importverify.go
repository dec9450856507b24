package postgres

import (
	"context"
	"fmt"
	"strings"
)

// setSequences moves every identity column's sequence past the largest copied value, so
// that the next event, notice or wave gets a new number.
func (im importer) setSequences(ctx context.Context) error {
	rows, err := im.dst.Query(ctx, `SELECT table_name::text, column_name::text FROM information_schema.columns
WHERE table_schema = current_schema() AND is_identity = 'YES'`)
	if err != nil {
		return fmt.Errorf("postgres: identity columns: %w", err)
	}
	type ident struct{ table, col string }
	var ids []ident
	for rows.Next() {
		var i ident
		if err := rows.Scan(&i.table, &i.col); err != nil {
			rows.Close()
			return fmt.Errorf("postgres: identity columns: %w", err)
		}
		ids = append(ids, i)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: identity columns: %w", err)
	}
	for _, i := range ids {
		q := fmt.Sprintf("SELECT setval(pg_get_serial_sequence('%s', '%s'), coalesce((SELECT max(%s) FROM %s), 0) + 1, false)", i.table, i.col, i.col, i.table)
		if _, err := im.dst.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres: sequence of %s.%s: %w", i.table, i.col, err)
		}
	}
	return nil
}

// verify counts every table's rows on both sides into rep and fails on any difference.
func (im importer) verify(ctx context.Context, rep *ImportReport) error {
	var bad []string
	for _, t := range importTables {
		c := TableCount{Table: t}
		if err := im.src.QueryRowContext(ctx, "SELECT count(*) FROM "+t).Scan(&c.SQLite); err != nil {
			return fmt.Errorf("sqlite: count %s: %w", t, err)
		}
		if err := im.dst.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&c.Postgres); err != nil {
			return fmt.Errorf("postgres: count %s: %w", t, err)
		}
		rep.Tables = append(rep.Tables, c)
		if c.SQLite != c.Postgres {
			bad = append(bad, fmt.Sprintf("%s (SQLite %d, PostgreSQL %d)", t, c.SQLite, c.Postgres))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: row counts differ in %s; nothing was written to PostgreSQL", ErrImportMismatch, strings.Join(bad, ", "))
	}
	return nil
}

// counterChecks pair each counter table (its nonzero rows) with the same numbers computed
// from the rows they count.
var counterChecks = []struct{ table, counters, fromRows string }{
	{"mission_counts", "SELECT state, sum(n) FROM mission_counts GROUP BY state HAVING sum(n) <> 0",
		"SELECT state, count(*) FROM missions GROUP BY state"},
	{"voyage_counts", "SELECT state, sum(n) FROM voyage_counts GROUP BY state HAVING sum(n) <> 0",
		"SELECT state, count(*) FROM voyages GROUP BY state"},
	{"attempt_outcomes", "SELECT profile, persona, sum(total), sum(completed) FROM attempt_outcomes GROUP BY profile, persona HAVING sum(total) <> 0 OR sum(completed) <> 0",
		"SELECT profile, persona, count(*), count(*) FILTER (WHERE outcome = 'completed') FROM attempts WHERE profile <> '' GROUP BY profile, persona"},
}

// verifyCounters checks that the copied counter tables agree with the copied rows (the
// triggers keep them so from here on).
func (im importer) verifyCounters(ctx context.Context) error {
	for _, c := range counterChecks {
		var diff int64
		q := fmt.Sprintf("SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) AS d", c.counters, c.fromRows, c.fromRows, c.counters)
		if err := im.dst.QueryRow(ctx, q).Scan(&diff); err != nil {
			return fmt.Errorf("postgres: check %s: %w", c.table, err)
		}
		if diff != 0 {
			return fmt.Errorf("%w: the SQLite store's %s disagrees with the rows it counts (%d differing rows); nothing was written to PostgreSQL: report this as a bug",
				ErrImportMismatch, c.table, diff)
		}
	}
	return nil
}
