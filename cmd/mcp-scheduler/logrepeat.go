package main

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// repeatWindow is how long an identical failure is logged only once: a database that is
// down fails every tick the same way, and one line per window (with how many were left out)
// says as much as hundreds.
const repeatWindow = 30 * time.Second

// quietRepeats is a slog.Handler that passes every record on, except a warning or error
// carrying an "err" attribute that repeats one already logged less than window ago (same
// level, message, attributes and error text): those are counted, and the next one logged
// after the window says how many were left out (repeated=N).
type quietRepeats struct {
	next   slog.Handler
	window time.Duration
	attrs  string // the With attributes and groups, part of every key
	seen   *repeatLog
}

// repeatLog is the state the handlers derived by WithAttrs and WithGroup share.
type repeatLog struct {
	mu   sync.Mutex
	last map[string]repeatEntry
}

// repeatEntry is when a key was last logged and how many of it were left out since.
type repeatEntry struct {
	at      time.Time
	dropped int
}

// newQuietRepeats wraps next.
func newQuietRepeats(next slog.Handler, window time.Duration) *quietRepeats {
	return &quietRepeats{next: next, window: window, seen: &repeatLog{last: map[string]repeatEntry{}}}
}

func (h *quietRepeats) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *quietRepeats) Handle(ctx context.Context, r slog.Record) error {
	key, ok := h.key(r)
	if !ok {
		return h.next.Handle(ctx, r)
	}
	dropped, log := h.seen.admit(key, r.Time, h.window)
	if !log {
		return nil
	}
	if dropped > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("repeated", dropped))
	}
	return h.next.Handle(ctx, r)
}

// key identifies a record for the repeat check; ok is false for records it does not apply
// to (below warning, or without an "err" attribute).
func (h *quietRepeats) key(r slog.Record) (string, bool) {
	if r.Level < slog.LevelWarn {
		return "", false
	}
	var b strings.Builder
	hasErr := false
	b.WriteString(r.Level.String() + "\x00" + r.Message + "\x00" + h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		hasErr = hasErr || a.Key == "err"
		b.WriteString("\x00" + a.String())
		return true
	})
	return b.String(), hasErr
}

// admit says whether a record of key at now is logged, and how many of it were left out
// before it; it forgets keys not seen for a window.
func (s *repeatLog) admit(key string, now time.Time, window time.Duration) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, seen := s.last[key]
	if seen && now.Sub(e.at) < window {
		e.dropped++
		s.last[key] = e
		return 0, false
	}
	if len(s.last) > 1000 {
		for k, old := range s.last {
			if now.Sub(old.at) >= window {
				delete(s.last, k)
			}
		}
	}
	s.last[key] = repeatEntry{at: now}
	return e.dropped, true
}

func (h *quietRepeats) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(as)
	for _, a := range as {
		c.attrs += "\x00" + a.String()
	}
	return &c
}

func (h *quietRepeats) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	c.attrs += "\x00group:" + name
	return &c
}
