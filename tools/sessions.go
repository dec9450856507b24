package tools

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// Streamable HTTP sessions (protocol revisions up to 2025-11-25; docs/mcp.md,
// "Sessions"). mcp-go mints and looks up session ids through a server.SessionIdManager; its
// default one validates only the id's format, so ids of an earlier process, forged ids and
// DELETEd ids kept working. sessionTable is the manager mcp-go is given instead: it knows
// exactly the ids this process issued for an initialize that succeeded and has not ended,
// bounds how many there are, and cancels what a session's requests still hold (waits, GET
// streams) when it ends. The gate in front of mcp-go (httpgate.go) consults it before any
// work, so an unknown id gets 404 without reaching a tool. Nothing durable depends on a
// session: after a restart the table is empty, every old id gets 404 and the client
// initializes again and sees the same missions.

// Session bounds (configurable: [http] max_sessions and session_idle).
const (
	DefaultMaxSessions = 1000
	DefaultSessionIdle = time.Hour
)

// sessionIDPrefix starts every session id (mcp-go's own ids use the same prefix).
const sessionIDPrefix = "mcp-session-"

// endedMemory bounds how many ended session ids are remembered with the reason they ended
// (for the 404 message), at least this many or max_sessions.
const endedMemory = 1024

// sessionTable tracks this process's sessions; it is safe for concurrent use.
type sessionTable struct {
	max  int
	idle time.Duration
	log  *slog.Logger
	// onEnd, when set, is called once for each live session that ends (its tasks end too).
	onEnd func(id, why string)

	mu      sync.Mutex
	seq     uint64
	pending map[string]bool          // issued for an initialize still being answered
	live    map[string]*sessionEntry // confirmed by a successful initialize
	ended   map[string]string        // recently ended id → why (bounded by endedOrder)
	order   []string                 // ended ids, oldest first
}

// sessionEntry is one live session: when it was last used and the cancel functions of the
// requests it has in flight (a session with one is never idle).
type sessionEntry struct {
	last     time.Time
	inflight map[uint64]context.CancelFunc
	token    namedToken // the bearer token its initialize came with (sessiontokens.go)
}

func newSessionTable(maxSessions int, idle time.Duration, log *slog.Logger) *sessionTable {
	return &sessionTable{max: maxSessions, idle: idle, log: log, pending: map[string]bool{},
		live: map[string]*sessionEntry{}, ended: map[string]string{}}
}

var errUnknownSession = errors.New("session not found")

// Generate implements server.SessionIdManager: a new id of 128 random bits, pending until
// confirm (a successful initialize) or end.
func (t *sessionTable) Generate() string {
	id := sessionIDPrefix + rand.Text()
	t.mu.Lock()
	t.pending[id] = true
	t.mu.Unlock()
	return id
}

// Validate implements server.SessionIdManager: nil for a live session, errUnknownSession for
// any other id.
func (t *sessionTable) Validate(id string) (isTerminated bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live[id] == nil {
		return false, errUnknownSession
	}
	return false, nil
}

// Terminate implements server.SessionIdManager. mcp-go calls it for a DELETE and at shutdown;
// the gate has already ended a DELETEd session with its reason, so here it is the shutdown.
func (t *sessionTable) Terminate(id string) (isNotAllowed bool, err error) {
	t.end(id, "the server shut down")
	return false, nil
}

// confirm makes a pending id live, after its initialize succeeded, and returns the sessions
// to evict to stay within max: the longest idle first, sessions with a request in flight
// only when every other one is gone.
func (t *sessionTable) confirm(id string) (evict []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.pending[id] {
		return nil // ended meanwhile (shutdown)
	}
	delete(t.pending, id)
	t.live[id] = &sessionEntry{last: time.Now(), inflight: map[uint64]context.CancelFunc{}}
	over := len(t.live) - t.max
	if over <= 0 {
		return nil
	}
	ids := make([]string, 0, len(t.live)-1)
	for other := range t.live {
		if other != id {
			ids = append(ids, other)
		}
	}
	slices.SortFunc(ids, func(a, b string) int {
		ea, eb := t.live[a], t.live[b]
		if busyA, busyB := len(ea.inflight) > 0, len(eb.inflight) > 0; busyA != busyB {
			if busyA {
				return 1
			}
			return -1
		}
		return ea.last.Compare(eb.last)
	})
	return ids[:min(over, len(ids))]
}

// lookup is what enter found for an id.
type lookup int

const (
	sessionLive lookup = iota
	sessionUnknown
	sessionExpired
)

// enter records a request in flight on session id, cancelled by cancel if the session ends
// first. For an unknown id it returns why it ended when that is remembered; an idle session
// past its time is reported expired (the caller ends it).
func (t *sessionTable) enter(id string, cancel context.CancelFunc) (seq uint64, found lookup, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.live[id]
	if e == nil {
		return 0, sessionUnknown, t.ended[id]
	}
	now := time.Now()
	if len(e.inflight) == 0 && now.Sub(e.last) >= t.idle {
		return 0, sessionExpired, ""
	}
	t.seq++
	e.inflight[t.seq] = cancel
	e.last = now
	return t.seq, sessionLive, ""
}

// leave ends the request entered as seq; the session's idle time starts again.
func (t *sessionTable) leave(id string, seq uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.live[id]; e != nil {
		delete(e.inflight, seq)
		e.last = time.Now()
	}
}

// isLive reports whether id is a live session.
func (t *sessionTable) isLive(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live[id] != nil
}

// expired returns the live sessions idle (no request in flight) for at least t.idle.
func (t *sessionTable) expired(now time.Time) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []string
	for id, e := range t.live {
		if len(e.inflight) == 0 && now.Sub(e.last) >= t.idle {
			ids = append(ids, id)
		}
	}
	return ids
}

// end removes session id (live or pending), remembers why, and cancels its requests in
// flight. It reports whether the id was there; ending an ended id does nothing.
func (t *sessionTable) end(id, why string) bool {
	t.mu.Lock()
	e, wasLive := t.live[id]
	wasPending := t.pending[id]
	delete(t.live, id)
	delete(t.pending, id)
	if wasLive || wasPending {
		t.remember(id, why)
	}
	t.mu.Unlock()
	if !wasLive {
		return wasPending
	}
	for _, cancel := range e.inflight {
		cancel()
	}
	if t.onEnd != nil {
		t.onEnd(id, why)
	}
	t.log.Info("MCP session ended", "session", id, "why", why, "requests_cancelled", len(e.inflight))
	return true
}

// remember records why id ended, forgetting the oldest beyond the bound. Callers hold mu.
func (t *sessionTable) remember(id, why string) {
	t.ended[id] = why
	t.order = append(t.order, id)
	if limit := max(endedMemory, t.max); len(t.order) > limit {
		delete(t.ended, t.order[0])
		t.order = t.order[1:]
	}
}

// why returns why session id ended, "" when that is not remembered.
func (t *sessionTable) why(id string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ended[id]
}

// counts returns the number of live and pending sessions (tests, logs).
func (t *sessionTable) counts() (live, pending int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.live), len(t.pending)
}

// initSlot receives the id mcp-go generates while answering one initialize request.
type initSlot struct{ id string }

type initSlotKey struct{}

// sessionResolver hands mcp-go the table, and for an initialize request a manager that also
// writes the generated id into the request's initSlot, so that the gate can confirm the
// session, or discard it if the initialize was refused.
type sessionResolver struct{ table *sessionTable }

// ResolveSessionIdManager implements server.SessionIdManagerResolver (r may be nil).
func (s sessionResolver) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r != nil {
		if slot, ok := r.Context().Value(initSlotKey{}).(*initSlot); ok {
			return slotManager{sessionTable: s.table, slot: slot}
		}
	}
	return s.table
}

// slotManager is the table seen by one initialize request.
type slotManager struct {
	*sessionTable
	slot *initSlot
}

func (m slotManager) Generate() string {
	id := m.sessionTable.Generate()
	m.slot.id = id
	return id
}
