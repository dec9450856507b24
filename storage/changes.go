package storage

import (
	"context"
	"time"
)

// DefaultChangePoll is how often Changes checks data_version when the caller names no
// interval.
const DefaultChangePoll = 250 * time.Millisecond

// Changes implements engine.Store: a signal (coalesced, one slot) each time a commit this
// Store did not make may have happened, found by checking PRAGMA data_version every interval
// (DefaultChangePoll when interval ≤ 0) on the store's watcher connection. The check is a read
// of the WAL index in shared memory: no I/O, a few microseconds. The channel closes when ctx
// ends or the store closes. A check that fails is logged (once, until one succeeds again) and
// signalled, so that a subscriber re-reads rather than miss a change.
//
// The watcher connection is not the writer's, so this Store's own commits move data_version
// too and are signalled as well, at most one interval later; the engine publishes them itself
// at once, with their events, so a subscriber sees them twice at worst, never not at all.
func (s *Store) Changes(ctx context.Context, interval time.Duration) <-chan struct{} {
	if interval <= 0 {
		interval = DefaultChangePoll
	}
	out := make(chan struct{}, 1)
	go s.watchVersion(ctx, interval, out)
	return out
}

func (s *Store) watchVersion(ctx context.Context, interval time.Duration, out chan<- struct{}) {
	defer close(out)
	last, lastErr := s.DataVersion(ctx)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.w.quit:
			return
		case <-t.C:
		}
		v, err := s.DataVersion(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			if lastErr == nil {
				s.log.Warn("storage: cannot check for other processes' changes; subscribers re-read at each check until it works again", "err", err)
			}
			lastErr = err
		case lastErr != nil:
			s.log.Info("storage: checking for other processes' changes works again")
			lastErr, last = nil, v
		case v == last:
			continue
		default:
			last = v
		}
		select {
		case out <- struct{}{}:
		default:
		}
	}
}
