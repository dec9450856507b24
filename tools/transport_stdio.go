package tools

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves MCP over a pair of streams (os.Stdin and os.Stdout in production) until
// the input ends or ctx is cancelled. Input lines pass a filter first (stdinFilter: BOM, CRLF,
// blank lines; malformed messages are answered with their JSON-RPC error). Only JSON-RPC
// messages are written to out, one per line: mcp-go's own error messages go to the logger,
// which must write elsewhere (stderr).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	st := server.NewStdioServer(s.mcp)
	st.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelError))
	lw := &lockedWriter{w: out}
	err := st.Listen(ctx, newStdinFilter(in, lw, s.log), lw)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// lockedWriter serialises writes to stdout between mcp-go (which writes each message, newline
// included, in one Write) and the stdin filter's error responses, so lines never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
