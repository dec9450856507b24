package engine

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Clock tells the engine the time. Tests inject a fake; every time the engine writes to the
// store (lease expiry, backoff, events) and every time-dependent query comes from it, so tests
// control time inside SQL too.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now truncated to milliseconds (the store's resolution).
func (SystemClock) Now() time.Time { return time.Now().Truncate(time.Millisecond) }

// ID prefixes: ids are "<prefix>_<ULID>", sortable by creation time.
const (
	PrefixMission    = "msn"
	PrefixVoyage     = "vyg"
	PrefixEscalation = "esc"
	PrefixAgent      = "agt"
)

// idGen makes prefixed ULIDs that sort in creation order even within one millisecond
// (monotonic entropy), from the engine's clock.
type idGen struct {
	mu      sync.Mutex
	entropy *ulid.MonotonicEntropy
}

func newIDGen() *idGen { return &idGen{entropy: ulid.Monotonic(rand.Reader, 0)} }

func (g *idGen) next(prefix string, now time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	id, err := ulid.New(ulid.Timestamp(now), g.entropy)
	if err != nil { // the monotonic counter overflowed within one millisecond: reseed
		g.entropy = ulid.Monotonic(rand.Reader, 0)
		id = ulid.MustNew(ulid.Timestamp(now), g.entropy)
	}
	return prefix + "_" + id.String()
}

var idPattern = regexp.MustCompile(`^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$`)

// ValidID reports whether s is an id the engine could have made with the given prefix. Ids
// are checked before any lookup so that nothing built from an id (paths, branch names) can
// escape its directory or be read as an option.
func ValidID(prefix, s string) bool {
	return len(s) == len(prefix)+27 && s[:len(prefix)] == prefix && idPattern.MatchString(s)
}

func checkID(field, prefix, s string) error {
	if !ValidID(prefix, s) {
		return invalid(field, fmt.Sprintf("%q is not a %s id", truncate(s, 80), prefix),
			"ids look like "+prefix+"_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D; copy one from list_missions or voyage_status")
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

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
