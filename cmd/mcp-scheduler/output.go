package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// writeJSON prints v as indented JSON (the --json form of every command).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table prints aligned columns; cells are cut at width runes (0: never).
type table struct {
	tw    *tabwriter.Writer
	width int
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0), width: 60}
	t.row(toAny(header)...)
	return t
}

func (t *table) row(cells ...any) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		parts[i] = cut(cellText(c), t.width)
	}
	fmt.Fprintln(t.tw, strings.Join(parts, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// cellText renders one cell on one line (tabs and newlines would break the columns).
func cellText(c any) string {
	var s string
	switch v := c.(type) {
	case time.Time:
		if v.IsZero() {
			return "-"
		}
		s = v.Local().Format("2006-01-02 15:04:05")
	case string:
		s = v
	default:
		s = fmt.Sprint(v)
	}
	if s == "" {
		return "-"
	}
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

// cut shortens s to n runes with an ellipsis (n == 0: unchanged).
func cut(s string, n int) string {
	if r := []rune(s); n > 0 && len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// jsonLine encodes v on one line.
func jsonLine(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
