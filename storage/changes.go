package storage

import (
	"context"
	"sync"
	"time"
)

// DefaultChangePoll is how often Changes checks data_version when the caller names no
// interval.
const DefaultChangePoll = 250 * time.Millisecond

// Changes implements engine.Store: a signal (coalesced, one slot) each time a commit this
// Store did not make may have happened. Two sources feed it:
//   - another Store handle of this process on the same database signals at once, right after
//     its commit (no poll: two engines of one process, a server and its own CLI calls);
//   - any other process is noticed by checking PRAGMA data_version every interval
//     (DefaultChangePoll when interval ≤ 0) on the store's watcher connection: a read of the
//     WAL index in shared memory, no I/O, a few microseconds.
//
// The channel closes when ctx ends or the store closes. A check that fails is logged (once,
// until one succeeds again) and signalled, so that a subscriber re-reads rather than miss a
// change. The watcher connection is not the writer's, so this Store's own commits move
// data_version too and are signalled as well, at most one interval later; the engine
// publishes them itself at once, with their events, so a subscriber sees them twice at worst,
// never not at all.
func (s *Store) Changes(ctx context.Context, interval time.Duration) <-chan struct{} {
	if interval <= 0 {
		interval = DefaultChangePoll
	}
	out := make(chan struct{}, 1)
	s.changes.add(out)
	go s.watchVersion(ctx, interval, out)
	return out
}

// changeSubs are a Store's Changes channels. A channel is closed only by its own watcher
// goroutine, after removing it under mu, so a signal sent under mu never meets a closed one.
type changeSubs struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

func (c *changeSubs) add(ch chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs == nil {
		c.subs = map[chan struct{}]struct{}{}
	}
	c.subs[ch] = struct{}{}
}

func (c *changeSubs) remove(ch chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.subs, ch)
	close(ch)
}

func (c *changeSubs) signal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ch := range c.subs {
		notify(ch)
	}
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// sameFile is every open Store of this process, by database path.
var sameFile = struct {
	sync.Mutex
	byPath map[string][]*Store
}{byPath: map[string][]*Store{}}

func (s *Store) register() {
	sameFile.Lock()
	defer sameFile.Unlock()
	sameFile.byPath[s.path] = append(sameFile.byPath[s.path], s)
}

func (s *Store) unregister() {
	sameFile.Lock()
	defer sameFile.Unlock()
	list := sameFile.byPath[s.path]
	for i, o := range list {
		if o == s {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(sameFile.byPath, s.path)
		return
	}
	sameFile.byPath[s.path] = list
}

// committed runs on the leading caller's goroutine after each commit: the other handles of the same
// database in this process signal their subscribers. With no other handle it is one map
// lookup.
func (s *Store) committed() {
	sameFile.Lock()
	defer sameFile.Unlock()
	for _, o := range sameFile.byPath[s.path] {
		if o != s {
			o.changes.signal()
		}
	}
}

func (s *Store) watchVersion(ctx context.Context, interval time.Duration, out chan struct{}) {
	defer s.changes.remove(out)
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
		notify(out)
	}
}
