package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// Bounds of the SSE event buffer that resumption (Last-Event-ID) replays from.
const (
	// DefaultEventBufferEvents is how many SSE events the server keeps, all sessions
	// together; older ones can no longer be resumed from.
	DefaultEventBufferEvents = 4096
	// DefaultEventBufferBytes bounds the bytes of the kept events' messages.
	DefaultEventBufferBytes = 8 << 20
)

// eventStore is the bounded server.EventStore behind Streamable HTTP resumption: one FIFO
// of the last events of every session and stream, trimmed from the oldest end to at most
// maxEvents events and maxBytes bytes of messages. mcp-go's InMemoryEventStore keeps a
// session's events until the session ends, which a long-lived session (a Main Agent that
// stays connected for days) would grow without bound.
//
// Event ids are one store-wide decimal sequence, so they are unique within a session as
// the transport requires. Replay is keyed by the session: an id of another session is
// unknown (mcp-go answers 400), so no event crosses sessions. Safe for concurrent use.
type eventStore struct {
	mu        sync.Mutex
	seq       uint64
	events    []storedEvent // ascending seq; purged sessions' events are removed
	bytes     int
	maxEvents int
	maxBytes  int
}

type storedEvent struct {
	seq     uint64
	session string
	stream  string
	message json.RawMessage
}

var _ server.EventStore = (*eventStore)(nil)

// newEventStore returns an empty store with the given bounds (<= 0: the defaults).
func newEventStore(maxEvents, maxBytes int) *eventStore {
	if maxEvents <= 0 {
		maxEvents = DefaultEventBufferEvents
	}
	if maxBytes <= 0 {
		maxBytes = DefaultEventBufferBytes
	}
	return &eventStore{maxEvents: maxEvents, maxBytes: maxBytes}
}

// StoreEvent records message as the next event of stream in session and returns its id.
func (s *eventStore) StoreEvent(_ context.Context, session, stream string, message json.RawMessage) (string, error) {
	msg := append(json.RawMessage(nil), message...) // the caller may reuse its buffer
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.events = append(s.events, storedEvent{seq: s.seq, session: session, stream: stream, message: msg})
	s.bytes += len(msg)
	s.trimLocked()
	return strconv.FormatUint(s.seq, 10), nil
}

// trimLocked drops the oldest events until both bounds hold (the newest event always stays).
func (s *eventStore) trimLocked() {
	drop := 0
	for len(s.events)-drop > 1 && (len(s.events)-drop > s.maxEvents || s.bytes > s.maxBytes) {
		s.bytes -= len(s.events[drop].message)
		drop++
	}
	if drop > 0 {
		clear(s.events[:drop]) // let the messages be collected
		s.events = s.events[drop:]
	}
}

// ReplayEventsAfter calls send, in order, for each event of lastEventID's stream stored
// after it, and returns that stream's id. An id that is malformed, of another session, or
// already trimmed from the buffer wraps server.ErrUnknownEventID.
func (s *eventStore) ReplayEventsAfter(_ context.Context, session, lastEventID string, send func(eventID string, message json.RawMessage) error) (string, error) {
	seq, err := strconv.ParseUint(lastEventID, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%w: %q is not an event id of this server", server.ErrUnknownEventID, lastEventID)
	}
	s.mu.Lock()
	i := sort.Search(len(s.events), func(i int) bool { return s.events[i].seq >= seq })
	if i == len(s.events) || s.events[i].seq != seq || s.events[i].session != session {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: %s (unknown to this session, or older than the replay buffer of %d events)", server.ErrUnknownEventID, lastEventID, s.maxEvents)
	}
	stream := s.events[i].stream
	var tail []storedEvent
	for _, e := range s.events[i+1:] {
		if e.session == session && e.stream == stream {
			tail = append(tail, e)
		}
	}
	s.mu.Unlock()
	for _, e := range tail {
		if err := send(strconv.FormatUint(e.seq, 10), e.message); err != nil {
			return "", err
		}
	}
	return stream, nil
}

// known reports whether lastEventID is in the buffer for session (a resume can start there).
func (s *eventStore) known(session, lastEventID string) bool {
	seq, err := strconv.ParseUint(lastEventID, 10, 64)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.Search(len(s.events), func(i int) bool { return s.events[i].seq >= seq })
	return i < len(s.events) && s.events[i].seq == seq && s.events[i].session == session
}

// PurgeSession forgets every event of session (mcp-go calls it when the session ends).
func (s *eventStore) PurgeSession(_ context.Context, session string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.events[:0]
	for _, e := range s.events {
		if e.session == session {
			s.bytes -= len(e.message)
			continue
		}
		kept = append(kept, e)
	}
	clear(s.events[len(kept):])
	s.events = kept
	return nil
}
