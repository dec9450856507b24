package engine

import (
	"context"
	"sync"
	"time"
)

// Change is one committed change, published after its transaction commits. Type is the event
// type ("mission.created", "lease.acquired", …) or ChangeExternal.
type Change struct {
	Seq       int64
	Type      string
	MissionID string
	VoyageID  string
}

// Change types that are not events.
const (
	// ChangeExternal marks a change committed by another process (seen through DataVersion);
	// its ids are unknown, so a subscriber re-reads what it watches.
	ChangeExternal = "external"
	// ChangeLeader: another process (or this one) became the scheduler's leader.
	ChangeLeader = "leader.changed"
	// ChangeAgentSeen: an agent was seen (TouchAgent).
	ChangeAgentSeen = "agent.seen"
)

// Hub fans committed changes out to subscribers without ever blocking the publisher: each
// subscription accumulates changes and is signalled through a one-slot channel, so bursts
// coalesce and nothing is lost (past maxPending the subscription only remembers that it
// overflowed).
type Hub struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

const maxPending = 4096

// Subscription receives changes. Wait on Ready, then call Take.
type Subscription struct {
	hub      *Hub
	ready    chan struct{}
	mu       sync.Mutex
	pending  []Change
	overflow bool
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{subs: map[*Subscription]struct{}{}} }

// Subscribe starts receiving changes; Close the subscription when done.
func (h *Hub) Subscribe() *Subscription {
	s := &Subscription{hub: h, ready: make(chan struct{}, 1)}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s
}

// Publish hands changes to every subscriber.
func (h *Hub) Publish(changes ...Change) {
	if len(changes) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.add(changes)
	}
}

func (s *Subscription) add(changes []Change) {
	s.mu.Lock()
	if len(s.pending)+len(changes) > maxPending {
		s.overflow = true
		s.pending = s.pending[:0]
	} else if !s.overflow {
		s.pending = append(s.pending, changes...)
	}
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Ready is signalled when changes are waiting.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Take returns the changes received since the last Take. overflow=true means some were
// dropped: re-read everything watched.
func (s *Subscription) Take() (changes []Change, overflow bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changes, overflow = s.pending, s.overflow
	s.pending, s.overflow = nil, false
	return changes, overflow
}

// Close stops the subscription.
func (s *Subscription) Close() {
	s.hub.mu.Lock()
	delete(s.hub.subs, s)
	s.hub.mu.Unlock()
}

// Wait blocks until changes arrive, ctx ends or d passes; it reports whether changes arrived.
func (s *Subscription) Wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ready:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// WatchExternal publishes ChangeExternal each time the store signals that another process
// may have committed (Store.Changes; interval bounds how late a polling backend notices). It
// returns when ctx ends or the store closes.
func (e *Engine) WatchExternal(ctx context.Context, interval time.Duration) error {
	for range e.store.Changes(ctx, interval) {
		e.hub.Publish(Change{Type: ChangeExternal})
	}
	return nil
}
