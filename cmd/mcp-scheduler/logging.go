package main

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/lmittmann/tint"
	"github.com/mattn/go-isatty"
)

// parseLevel reads a log level name.
func parseLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, true
	case "info", "":
		return slog.LevelInfo, true
	case "warn", "warning":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	}
	return 0, false
}

// newLogger writes human-readable records to w (stderr: stdout belongs to the stdio MCP
// transport). Colours only on a terminal, and never when NO_COLOR is set
// (https://no-color.org). A failure repeated within repeatWindow is logged once
// (quietRepeats).
func newLogger(w io.Writer, level slog.Leveler, env getenv) *slog.Logger {
	noColor := env("NO_COLOR") != "" || !isTerminal(w)
	h := tint.NewTextHandler(w, &tint.Options{Level: level, TimeFormat: time.RFC3339Nano, NoColor: noColor})
	return slog.New(newQuietRepeats(h, repeatWindow))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
