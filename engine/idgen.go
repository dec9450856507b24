package engine

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
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
