package main

import (
	"context"
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
)

// A PostgreSQL server that is not up when serve (or daemon --http) starts does not keep
// clients waiting in silence: serve opens the store with connectLater, serves MCP at once (every
// tool call answers that the database is not reachable yet, why, and until when it is
// retried: postgres.UnavailableError) and starts the scheduler loop once the database is
// open. When [storage] connect_wait runs out it stops serving and exits non-zero.

// storeConnecting reports whether the store is still being connected to (a.pending).
func (a *app) storeConnecting() bool {
	if a.pending == nil {
		return false
	}
	select {
	case <-a.pending.Ready():
		return false
	default:
		return true
	}
}

// awaitStore waits until the pending store is open (nil), opening it failed (that error,
// saying what to do), ctx ended (stopped true), or served (nil: none) delivered the transport's end (that result, with
// stopped true: the client went away first). The wait is logged when it starts and ends.
func (a *app) awaitStore(ctx context.Context, served <-chan error) (stopped bool, err error) {
	url := postgres.SafeURL(a.cfg.Storage.URL)
	a.log.Warn("serving MCP while the database is not reachable yet: tool calls answer so until it is; the scheduler loop starts then",
		"url", url, "connect_wait", a.cfg.Storage.ConnectWait.D())
	select {
	case <-a.pending.Ready():
	case err := <-served:
		return true, err
	case <-ctx.Done():
		return true, nil
	}
	if _, err := a.pending.Wait(ctx); err != nil {
		return false, fmt.Errorf("%w; stopped serving", err)
	}
	a.log.Info("database", "backend", "postgres", "url", url)
	return false, nil
}
