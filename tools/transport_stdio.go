package tools

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves MCP over a pair of streams (os.Stdin and os.Stdout in production) until
// the input ends or ctx is cancelled. Input lines pass a filter first (stdinFilter: BOM, CRLF,
// blank and non-JSON lines). Only JSON-RPC messages are written to out: mcp-go's own
// error messages go to the logger, which must write elsewhere (stderr).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	st := server.NewStdioServer(s.mcp)
	st.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelError))
	err := st.Listen(ctx, newStdinFilter(in, s.log), out)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}
