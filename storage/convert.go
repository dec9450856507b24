package storage

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Times are stored as INTEGER unix milliseconds; the zero time is NULL (or 0 where the
// column is NOT NULL).

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
		panic(fmt.Sprintf("storage: marshal %T: %v", v, err)) // only plain data types reach here
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
		panic(fmt.Sprintf("storage: marshal %T: %v", v, err))
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

// translate maps driver errors to the engine's sentinels at the storage boundary.
func translate(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, domain.ErrNotFound)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			return fmt.Errorf("%s: %w: %s", what, domain.ErrDuplicateID, constraintName(se.Error()))
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%s: %w (a referenced mission or voyage does not exist)", what, domain.ErrUnknownMission)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

func constraintName(msg string) string {
	if i := strings.LastIndex(msg, "failed: "); i >= 0 {
		return msg[i+len("failed: "):]
	}
	return msg
}
