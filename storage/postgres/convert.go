package postgres

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The schema keeps SQLite's column shapes (migrations/0015_schema.sql): times are BIGINT unix
// milliseconds, the zero time NULL (or 0 where the column is NOT NULL); flags are 0/1; lists
// and records are JSON text. These helpers are the SQLite backend's, so that both backends
// store the same values.

func ms(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func ms0(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid || v.Int64 == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// jsonText marshals v for a NOT NULL JSON column.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("postgres: marshal %T: %v", v, err)) // only plain data types reach here
	}
	return string(b)
}

// jsonOrNull marshals v, or returns NULL when v is a nil pointer, nil slice or empty raw JSON.
func jsonOrNull(v any) any {
	switch x := v.(type) {
	case json.RawMessage:
		if len(x) == 0 {
			return nil
		}
		return string(x)
	case []string:
		if len(x) == 0 {
			return nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("postgres: marshal %T: %v", v, err))
	}
	if string(b) == "null" {
		return nil
	}
	return string(b)
}

func strList(s string) []string {
	if s == "" || s == "[]" || s == "null" {
		return nil
	}
	var out []string
	_ = json.Unmarshal([]byte(s), &out) // written by us from []string
	return out
}

func nullList(v sql.NullString) []string {
	if !v.Valid {
		return nil
	}
	return strList(v.String)
}

func decodeInto[T any](v sql.NullString) *T {
	if !v.Valid || v.String == "" {
		return nil
	}
	out := new(T)
	if err := json.Unmarshal([]byte(v.String), out); err != nil {
		return nil
	}
	return out
}

func rawJSON(v sql.NullString) json.RawMessage {
	if !v.Valid || v.String == "" {
		return nil
	}
	return json.RawMessage(v.String)
}

// PostgreSQL error codes the store translates (Appendix A of the PostgreSQL manual).
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
)

// translate maps driver errors to the engine's sentinels at the storage boundary: no row is
// ErrNotFound, a unique or primary key violation ErrDuplicateID (naming the constraint), a
// foreign key violation ErrUnknownMission. Serialization failures pass through wrapped, so
// that Update's retry (retryable, errors.As) still recognises them.
func translate(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, domain.ErrNotFound)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeUniqueViolation:
			return fmt.Errorf("%s: %w: %s", what, domain.ErrDuplicateID, pe.ConstraintName)
		case codeForeignKeyViolation:
			return fmt.Errorf("%s: %w (a referenced mission or voyage does not exist)", what, domain.ErrUnknownMission)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// guarded turns a guarded statement that matched no row into ErrGuard.
func guarded(tag pgconn.CommandTag, what string) error {
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", what, domain.ErrGuard)
	}
	return nil
}
