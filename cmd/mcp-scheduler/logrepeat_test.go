package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A failure repeated every tick (the database down) is logged once per window, and the next
// line after the window says how many were left out; a different failure, a record without
// an error and anything below warning always pass.
func TestQuietRepeats_LogsARepeatedFailureOncePerWindow(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	h := newQuietRepeats(slog.NewTextHandler(&buf, nil), time.Minute).WithAttrs([]slog.Attr{slog.String("component", "scheduler")})
	t0 := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	logAt := func(d time.Duration, level slog.Level, msg string, attrs ...slog.Attr) {
		r := slog.NewRecord(t0.Add(d), level, msg, 0)
		r.AddAttrs(attrs...)
		require.NoError(t, h.Handle(context.Background(), r))
	}
	down := slog.Any("err", errors.New("the database at postgres://u:xxxxx@h/db is not reachable: connection refused"))
	for i := range 5 {
		logAt(time.Duration(i)*time.Second, slog.LevelError, "tick failed", down)
	}
	logAt(6*time.Second, slog.LevelError, "tick failed", slog.Any("err", errors.New("another failure")))
	logAt(7*time.Second, slog.LevelWarn, "agent stalled", slog.String("mission_id", "m1"))
	logAt(8*time.Second, slog.LevelWarn, "agent stalled", slog.String("mission_id", "m1"))
	logAt(9*time.Second, slog.LevelInfo, "info", down)
	logAt(10*time.Second, slog.LevelInfo, "info", down)
	logAt(61*time.Second, slog.LevelError, "tick failed", down)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	count := func(sub string) int {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, sub) {
				n++
			}
		}
		return n
	}
	require.Equal(t, 2, count(`msg="tick failed" component=scheduler err="the database`), buf.String())
	require.Equal(t, 1, count("repeated=4"), "the line after the window counts the 4 left out:\n%s", buf.String())
	require.Equal(t, 1, count("another failure"))
	require.Equal(t, 2, count("agent stalled"), "a warning without an error is not checked")
	require.Equal(t, 2, count("msg=info"), "info is never left out")
	require.Equal(t, len(lines), count("component=scheduler"))
}
