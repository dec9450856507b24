package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// column is one PostgreSQL column of a copied table: its name and data_type.
type column struct{ name, typ string }

// copyTable copies one table's SQLite rows, in primary-key order, with COPY.
func (im importer) copyTable(ctx context.Context, table string) error {
	cols, err := im.columns(ctx, table)
	if err != nil {
		return err
	}
	order, err := pgList(ctx, im.dst, `SELECT a.attname::text FROM pg_index i
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY array_position(i.indkey::int2[], a.attnum)`, table)
	if err != nil {
		return fmt.Errorf("postgres: %s: primary key: %w", table, err)
	}
	if replacedTables[table] {
		if _, err := im.dst.Exec(ctx, "DELETE FROM "+table); err != nil {
			return fmt.Errorf("postgres: empty %s: %w", table, err)
		}
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	q := "SELECT " + strings.Join(names, ", ") + " FROM " + table
	if len(order) > 0 {
		q += " ORDER BY " + strings.Join(order, ", ")
	}
	rows, err := im.src.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("sqlite: read %s: %w", table, err)
	}
	defer rows.Close()
	n, err := im.dst.CopyFrom(ctx, pgx.Identifier{table}, names, &rowSource{rows: rows, cols: cols, table: table})
	if err != nil {
		return fmt.Errorf("postgres: copy %s: %w", table, err)
	}
	im.log.Debug("table copied", "table", table, "rows", n)
	return nil
}

// columns lists the PostgreSQL table's columns and checks that the SQLite table has the same
// names (order may differ: SQLite adds columns at the end, the PostgreSQL schema groups them).
func (im importer) columns(ctx context.Context, table string) ([]column, error) {
	rows, err := im.dst.Query(ctx, `SELECT column_name::text, data_type::text FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: columns: %w", table, err)
	}
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (column, error) {
		var c column
		return c, r.Scan(&c.name, &c.typ)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: columns: %w", table, err)
	}
	lite, err := sqliteList(ctx, im.src, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: columns: %w", table, err)
	}
	var pgNames []string
	for _, c := range cols {
		pgNames = append(pgNames, c.name)
	}
	slices.Sort(lite)
	slices.Sort(pgNames)
	if !slices.Equal(lite, pgNames) {
		return nil, fmt.Errorf("table %s: the SQLite columns (%s) are not the PostgreSQL ones (%s): the schemas differ; use the mcp-scheduler that wrote the store",
			table, strings.Join(lite, ", "), strings.Join(pgNames, ", "))
	}
	return cols, nil
}

// rowSource feeds SQLite rows to CopyFrom, converting each value to its PostgreSQL column's
// type (pgx.CopyFromSource).
type rowSource struct {
	rows  *sql.Rows
	cols  []column
	table string
	vals  []any
	err   error
	n     int64
}

func (s *rowSource) Next() bool {
	if s.err != nil || !s.rows.Next() {
		return false
	}
	s.n++
	raw := make([]any, len(s.cols))
	ptrs := make([]any, len(s.cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if s.err = s.rows.Scan(ptrs...); s.err != nil {
		return false
	}
	s.vals = make([]any, len(s.cols))
	for i, c := range s.cols {
		v, err := convert(raw[i], c.typ)
		if err != nil {
			s.err = fmt.Errorf("sqlite: %s row %d, column %s: %w", s.table, s.n, c.name, err)
			return false
		}
		s.vals[i] = v
	}
	return true
}

func (s *rowSource) Values() ([]any, error) { return s.vals, nil }

func (s *rowSource) Err() error {
	if s.err != nil {
		return s.err
	}
	return s.rows.Err()
}

// convert turns a value the SQLite driver returned (nil, int64, float64, string, []byte)
// into the Go type COPY sends for a PostgreSQL column of data type typ.
func convert(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ {
	case "bigint", "integer", "smallint":
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x), nil
			}
		}
	case "double precision", "real":
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		}
	case "text":
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case "boolean":
		if x, ok := v.(int64); ok {
			return x != 0, nil
		}
	}
	return nil, fmt.Errorf("a %T value (%v) does not fit a PostgreSQL %s column", v, v, typ)
}
