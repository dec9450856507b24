package engine

import (
	"sync"
	"time"
)

// Clock tells the engine the time. Tests inject a fake; every time the engine writes to the
// store (lease expiry, backoff, events) and every time-dependent query comes from it, so tests
// control time inside SQL too.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now truncated to milliseconds (the store's resolution).
func (SystemClock) Now() time.Time { return time.Now().Truncate(time.Millisecond) }

// FakeClock is a Clock that only moves when told (tests, simulations). Safe for concurrent use.
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewFakeClock returns a FakeClock set to t (truncated to milliseconds).
func NewFakeClock(t time.Time) *FakeClock { return &FakeClock{now: t.UTC().Truncate(time.Millisecond)} }

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the fake time forward by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
