package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Pending is a store whose database is still being connected to and migrated in the
// background (OpenPending), so that a server can answer its clients meanwhile. Until the
// connection is made, Update and View return an *UnavailableError naming the URL, the last
// reason a try failed and when the wait ends; afterwards they are the Store's. If Open fails
// (the wait ran out, wrong credentials, a failed migration) they return that error.
type Pending struct {
	url    string
	until  time.Time
	cancel context.CancelFunc
	ready  chan struct{} // closed once the background Open returned
	st     *Store        // set before ready closes (nil when Open failed)
	err    error         // Open's error, set before ready closes

	mu    sync.Mutex
	cause string // why the last try failed
}

// OpenPending starts Open(ctx, url, opt) in the background and returns at once. Ready
// closes when it has returned; Wait returns its outcome. Close stops a connection still
// being tried.
func OpenPending(ctx context.Context, url string, opt Options) *Pending {
	ctx, cancel := context.WithCancel(ctx)
	p := &Pending{url: url, until: time.Now().Add(max(opt.connectWait(), 0)), cancel: cancel,
		ready: make(chan struct{}), cause: "connecting"}
	go func() {
		defer close(p.ready)
		p.st, p.err = open(ctx, url, opt, p.failed)
	}()
	return p
}

// failed records why a try to connect failed.
func (p *Pending) failed(cause string) {
	p.mu.Lock()
	p.cause = cause
	p.mu.Unlock()
}

// Ready is closed once the database is open, or opening it failed (Wait says which).
func (p *Pending) Ready() <-chan struct{} { return p.ready }

// Wait waits until the database is open and returns the store, or Open's error, or ctx's
// error when ctx ends first.
func (p *Pending) Wait(ctx context.Context) (*Store, error) {
	select {
	case <-p.ready:
		return p.st, p.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// store returns the open Store, or the error to answer meanwhile.
func (p *Pending) store() (*Store, error) {
	select {
	case <-p.ready:
		return p.st, p.err
	default:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return nil, &UnavailableError{URL: SafeURL(p.url), Cause: p.cause, Until: p.until}
}

// Update is the open Store's Update; until then an *UnavailableError (or Open's error).
func (p *Pending) Update(ctx context.Context, fn func(engine.Tx) error) error {
	st, err := p.store()
	if err != nil {
		return err
	}
	return st.Update(ctx, fn)
}

// View is the open Store's View; until then an *UnavailableError (or Open's error).
func (p *Pending) View(ctx context.Context, fn func(engine.Reader) error) error {
	st, err := p.store()
	if err != nil {
		return err
	}
	return st.View(ctx, fn)
}

// Changes is the open Store's Changes, from when it is open (its first signal comes then:
// everything may have changed); it closes at once when opening failed, and when ctx ends.
func (p *Pending) Changes(ctx context.Context, interval time.Duration) <-chan struct{} {
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		st, err := p.Wait(ctx)
		if err != nil {
			return
		}
		for range st.Changes(ctx, interval) {
			signal(out)
		}
	}()
	return out
}

// Close stops a connection still being tried, waits for it to end, and closes the store if
// it was opened.
func (p *Pending) Close() error {
	p.cancel()
	<-p.ready
	if p.st == nil {
		return nil
	}
	return p.st.Close()
}
