package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// writeJSON prints v as indented JSON (the --json form of every command).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table prints a command's rows. On a terminal the columns are aligned and long cells are
// cut at width runes with an ellipsis, to fit a screen; anywhere else (a pipe, a file) every
// cell is printed whole and the cells are separated by one tab, so that `cut -f`, `awk -F'\t'`
// or a spreadsheet read them (cells never hold tabs or newlines: cellText). The header is
// printed in both forms.
type table struct {
	w     io.Writer
	tw    *tabwriter.Writer // nil: tab-separated
	width int
	err   error // the first write error, returned by flush
}

func newTable(w io.Writer, header ...string) *table {
	return newTableFor(w, isTerminal(w), header...)
}

// newTableFor is newTable with the terminal decision made by the caller.
func newTableFor(w io.Writer, terminal bool, header ...string) *table {
	t := &table{w: w}
	if terminal {
		t.tw, t.width = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0), 60
	}
	t.row(toAny(header)...)
	return t
}

func (t *table) row(cells ...any) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		parts[i] = cut(cellText(c), t.width)
	}
	var w io.Writer = t.tw
	if t.tw == nil {
		w = t.w
	}
	if _, err := fmt.Fprintln(w, strings.Join(parts, "\t")); err != nil && t.err == nil {
		t.err = err
	}
}

// flush writes what is buffered and returns the first error of any write.
func (t *table) flush() error {
	if t.err != nil || t.tw == nil {
		return t.err
	}
	return t.tw.Flush()
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// printShown prints human output whose arguments hold stored text (titles, briefs, reasons,
// an agent's words) as people are shown text: domain.Shown writes the characters that do not
// show, or that would drive the terminal (an escape, a right-to-left override), as escapes
// such as <U+202E>. Table cells get the same through cellText; --json prints the text as
// stored.
func printShown(w io.Writer, format string, args ...any) error {
	_, err := io.WriteString(w, domain.Shown(fmt.Sprintf(format, args...)))
	return err
}

// cellText renders one cell on one line (tabs and newlines would break the columns), as
// people are shown text (domain.Shown).
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
	return domain.Shown(strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s))
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
