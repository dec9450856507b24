package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// statusCache keeps the encoded status between changes, so that the status tool and the
// scheduler://status resource cost a lookup rather than six queries, however often clients
// poll. It is valid only while Server.Run listens to the engine's hub:
//
//   - every change committed through this process's engine is published to the hub before
//     the call that made it returns, and marks the cache stale (a one-slot signal checked at
//     each read), so a status read never misses a change made before it began;
//   - changes by other processes reach the hub as ChangeExternal through the engine's
//     DataVersion watcher (serve runs it), bounded by its interval;
//   - what changes without an event (agent last-seen times, the leader's renewals and phase)
//     is bounded by maxAge, and the entry never outlives the leader lease it describes.
type statusCache struct {
	mu    sync.Mutex
	sub   *engine.Subscription // nil while nothing listens: no caching
	raw   json.RawMessage
	until time.Time
}

// statusMaxAge bounds how long an entry is served.
const statusMaxAge = time.Second

// attach starts caching with changes from hub; the returned function stops it.
func (c *statusCache) attach(hub *engine.Hub) (detach func()) {
	sub := hub.Subscribe()
	c.mu.Lock()
	c.sub, c.raw = sub, nil
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.sub, c.raw = nil, nil
		c.mu.Unlock()
		sub.Close()
	}
}

// get returns the encoded status, from the cache when nothing changed since it was read.
func (c *statusCache) get(ctx context.Context, e *engine.Engine) (json.RawMessage, error) {
	if c == nil {
		st, err := ReadStatus(ctx, e)
		if err != nil {
			return nil, err
		}
		return json.Marshal(st)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sub != nil {
		select {
		case <-c.sub.Ready():
			c.sub.Take()
			c.raw = nil
		default:
		}
		if c.raw != nil && time.Now().Before(c.until) {
			return c.raw, nil
		}
	}
	now := time.Now()
	st, err := ReadStatus(ctx, e)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode status: %w", err)
	}
	if c.sub != nil {
		c.raw, c.until = raw, now.Add(statusMaxAge)
		if l := st.Leader; l != nil { // never serve "leading" past the lease's expiry
			if left := l.ExpiresAt.Sub(e.Now()); left < statusMaxAge {
				c.until = now.Add(left)
			}
		}
	}
	return raw, nil
}
