package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrStarted is returned by a second Start of a service (or of the Scheduler): a service
// runs one set of goroutines in its life. Stop it and make a new one to run again.
var ErrStarted = errors.New("already started")

// lifecycle is the guarded lifetime of the goroutines a service starts in its Start (its
// loops): start runs them once, under a context stop cancels; stop cancels it and waits for
// exactly those goroutines. Stop before start does nothing, stop twice is fine, and a start
// after stop is refused like a second start. The zero value is ready; name is for errors.
type lifecycle struct {
	name string

	mu      sync.Mutex
	started bool // start ran, or stop did (a stopped service does not start)
	cancel  context.CancelFunc
	loops   sync.WaitGroup
}

// start runs each loop in a goroutine of its own under a child of ctx, unless the service
// was started (or stopped) before: then ErrStarted, and nothing runs.
func (l *lifecycle) start(ctx context.Context, loops ...func(context.Context)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		return fmt.Errorf("%s: %w (a stopped service does not start again either: make a new one)", l.name, ErrStarted)
	}
	l.started = true
	ctx, l.cancel = context.WithCancel(ctx)
	for _, loop := range loops {
		l.loops.Add(1)
		go func() {
			defer l.loops.Done()
			loop(ctx)
		}()
	}
	return nil
}

// stop cancels the loops' context and returns when every loop start ran has returned.
func (l *lifecycle) stop() {
	l.mu.Lock()
	l.started = true
	cancel := l.cancel
	l.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	l.loops.Wait()
}

// every calls fn every d (the first call after d) until ctx ends: the body of a service's
// keeper loop.
func every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}
