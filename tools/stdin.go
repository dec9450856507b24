package tools

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// MaxStdinMessage caps one JSON-RPC message read from stdin (bytes); a longer line is dropped
// with a log line and reading goes on at the next one.
const MaxStdinMessage = 64 << 20

// stdinFilter hands mcp-go's stdio transport only lines that are JSON (shared/cases B24): a
// UTF-8 BOM before the first message and a trailing "\r" are removed, blank and whitespace-only
// lines are skipped, and a line that is not JSON (a launcher's banner) or is over the cap is
// logged and counted but never answered: an unsolicited error reply makes strict clients
// close the session (B01). Lines of any length up to the cap are accepted (B23).
type stdinFilter struct {
	lines   *agent.LineReader
	log     *slog.Logger
	pending []byte
	dropped atomic.Int64
}

func newStdinFilter(in io.Reader, log *slog.Logger) *stdinFilter {
	return &stdinFilter{lines: agent.NewLineReader(in, MaxStdinMessage), log: log}
}

// Read implements io.Reader over the accepted lines, each "\n" terminated.
func (f *stdinFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, err := f.lines.Next()
		var tooLong *agent.LineTooLongError
		switch {
		case errors.As(err, &tooLong):
			f.drop("a message over the size cap", tooLong.Error())
			continue
		case err != nil:
			return 0, err
		case !json.Valid(line):
			f.drop("a line that is not JSON", clip(string(line), 200))
			continue
		}
		f.pending = append(line, '\n')
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func (f *stdinFilter) drop(what, detail string) {
	n := f.dropped.Add(1)
	f.log.Warn("ignored "+what+" on stdin", "line", detail, "ignored_lines", n)
}
