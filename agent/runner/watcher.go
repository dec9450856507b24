package runner

import (
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// dirWatcher wakes file followers when something changes in their attempt directory. One
// inotify (kqueue) instance serves a whole Runner: instances are a scarce per-user resource
// (128 by default on Linux), directories are not. Followers also poll, so a watcher that
// could not be created or a missed notification only costs latency.
type dirWatcher struct {
	fs   *fsnotify.Watcher // nil when notifications are unavailable
	log  *slog.Logger
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
	done chan struct{}
}

func newDirWatcher(log *slog.Logger) *dirWatcher {
	w := &dirWatcher{log: log, subs: map[string]map[chan struct{}]struct{}{}, done: make(chan struct{})}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		log.Warn("file notifications unavailable; following agent output by polling", "err", err)
		close(w.done)
		return w
	}
	w.fs = fw
	go w.loop()
	return w
}

func (w *dirWatcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			w.notify(filepath.Dir(ev.Name))
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			// An overflow drops notifications; wake everyone, they re-read their files.
			w.log.Warn("file notification error", "err", err)
			w.notifyAll()
		}
	}
}

func (w *dirWatcher) notify(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.subs[dir] {
		wake(ch)
	}
}

func (w *dirWatcher) notifyAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, set := range w.subs {
		for ch := range set {
			wake(ch)
		}
	}
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// subscribe returns a channel that receives (coalesced) wake-ups for changes in dir, and the
// function that ends the subscription.
func (w *dirWatcher) subscribe(dir string) (<-chan struct{}, func()) {
	dir = filepath.Clean(dir)
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	set := w.subs[dir]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		w.subs[dir] = set
		if w.fs != nil {
			if err := w.fs.Add(dir); err != nil {
				w.log.Warn("cannot watch attempt directory; polling it", "dir", dir, "err", err)
			}
		}
	}
	set[ch] = struct{}{}
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(set, ch)
		if len(set) == 0 {
			delete(w.subs, dir)
			if w.fs != nil {
				_ = w.fs.Remove(dir)
			}
		}
	}
}

// close stops the watcher; subscriptions left open only stop receiving wake-ups.
func (w *dirWatcher) close() error {
	if w.fs == nil {
		return nil
	}
	err := w.fs.Close()
	<-w.done
	return err
}
