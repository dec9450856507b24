package tools

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// MaxStdinMessage caps one JSON-RPC message read from stdin or from an HTTP body (bytes); a
// longer one is refused with -32700 and reading goes on at the next line.
const MaxStdinMessage = 64 << 20

// stdinFilter hands mcp-go's stdio transport only well-formed JSON-RPC messages (shared/cases
// B24): a UTF-8 BOM before the first message and a trailing "\r" are removed, and blank and
// whitespace-only lines are skipped. Any other line that checkMessage refuses (not JSON, such
// as a launcher's banner; over the size cap; nested too deeply; an invalid request) is logged,
// counted and answered on stdout with the JSON-RPC error (-32700 with id null, or -32600), so
// a client never waits for an answer that cannot come. Lines of any length up to the cap are
// accepted (B23).
type stdinFilter struct {
	lines   *agent.LineReader
	log     *slog.Logger
	reply   io.Writer // where error responses go: stdout, shared with mcp-go (lockedWriter)
	pending []byte
	dropped atomic.Int64
	// intercept, when set, may answer a checked message itself (the task methods,
	// taskrpc.go); it reports whether it did, and the message then goes no further.
	intercept func(head messageHead, line []byte) bool
}

func newStdinFilter(in io.Reader, reply io.Writer, log *slog.Logger) *stdinFilter {
	return &stdinFilter{lines: agent.NewLineReader(in, MaxStdinMessage), reply: reply, log: log}
}

// Read implements io.Reader over the accepted lines, each "\n" terminated.
func (f *stdinFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, err := f.lines.Next()
		var tooLong *agent.LineTooLongError
		switch {
		case errors.As(err, &tooLong):
			f.refuse(&rpcProblem{Code: mcp.PARSE_ERROR, ID: jsonNull,
				Message: fmt.Sprintf("parse error: the message is over the %d MiB cap; send smaller messages", MaxStdinMessage>>20)},
				tooLong.Error())
			continue
		case err != nil:
			return 0, err
		}
		head, p := inspectMessage(line)
		if p != nil {
			f.refuse(p, clip(string(line), 200))
			continue
		}
		if f.intercept != nil && f.intercept(head, line) {
			continue
		}
		f.pending = append(line, '\n')
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// refuse answers a refused line with its JSON-RPC error and logs it with the running count.
func (f *stdinFilter) refuse(p *rpcProblem, detail string) {
	n := f.dropped.Add(1)
	f.log.Warn("refused a message on stdin", "code", p.Code, "reason", p.Message, "line", detail, "refused_lines", n)
	if _, err := f.reply.Write(append(rpcErrorLine(p), '\n')); err != nil {
		f.log.Error("writing the error response to stdout", "err", err)
	}
}
