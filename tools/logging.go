package tools

import (
	"context"
	"log/slog"
)

// requestLogHandler demotes mcp-go's per-request records ("mcp.request", "mcp.tool", logged
// at INFO with their duration and outcome) to DEBUG, so that a server at the default level
// logs what matters, not every call. Warnings and errors pass unchanged.
type requestLogHandler struct{ slog.Handler }

func (h requestLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.Handler.Enabled(ctx, l) // demotion only lowers levels: Handle checks again
}

func (h requestLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && (r.Message == "mcp.request" || r.Message == "mcp.tool") {
		r.Level = slog.LevelDebug
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestLogHandler{h.Handler.WithAttrs(as)}
}

func (h requestLogHandler) WithGroup(name string) slog.Handler {
	return requestLogHandler{h.Handler.WithGroup(name)}
}

// requestLogger returns l with per-request records demoted to DEBUG.
func requestLogger(l *slog.Logger) *slog.Logger { return slog.New(requestLogHandler{l.Handler()}) }
