package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// queued reports how many requests wait for the writer (the leader's own batch excluded).
func (w *writer) queued() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue)
}

// waitQueued waits until n requests wait for the writer.
func waitQueued(t *testing.T, w *writer, n int) {
	t.Helper()
	testenv.WaitForState(t, fmt.Sprintf("%d requests queued for the writer", n), func() bool { return w.queued() >= n },
		func() string { return fmt.Sprintf("%d queued", w.queued()) })
}

// Leader group commit: the Update that finds the writer idle runs on its caller's goroutine;
// the ones that arrive while it runs queue, and when the leader's own request is done the
// oldest of them leads and runs all of them in one transaction. Each gets its own result: a
// function's error rolls back its own writes only, a request cancelled while it waited is
// not run.
func TestWriter_QueuedUpdatesShareTheNextLeadersCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir()+"/lead.db", Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	c0, u0 := s.WriteStats()

	hold, release := holdRelease(t)
	entered := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.Update(ctx, func(tx engine.Tx) error {
			close(entered)
			<-hold // holds the connection until the others queued
			return tx.SetPaused(ctx, true)
		})
	}()
	<-entered // the leader's batch is taken: whatever comes now queues

	cancelled, cancel := context.WithCancel(ctx)
	boom := errors.New("boom")
	var wg sync.WaitGroup
	results := make([]error, 4)
	fns := []func(engine.Tx) error{
		func(tx engine.Tx) error { return tx.SetPaused(ctx, false) },
		func(tx engine.Tx) error {
			if err := tx.SetPaused(ctx, true); err != nil {
				return err
			}
			return boom // rolled back to its savepoint: paused stays false
		},
		func(engine.Tx) error { return errors.New("a cancelled request ran") },
		func(engine.Tx) error { return nil },
	}
	for i, fn := range fns {
		c := ctx
		if i == 2 {
			c = cancelled
		}
		wg.Go(func() { results[i] = s.Update(c, fn) })
		waitQueued(t, s.w, i+1)
	}
	cancel()
	release()
	wg.Wait()
	require.NoError(t, <-first)
	require.NoError(t, results[0])
	require.ErrorIs(t, results[1], boom)
	require.ErrorIs(t, results[2], context.Canceled)
	require.NoError(t, results[3])

	c1, u1 := s.WriteStats()
	require.Equal(t, int64(2), c1-c0, "the leader's commit, then one commit for the four queued")
	require.Equal(t, int64(5), u1-u0)
	var paused bool
	require.NoError(t, s.View(ctx, func(r engine.Reader) error {
		paused, err = r.Paused(ctx)
		return err
	}))
	require.False(t, paused, "the failed request's write was rolled back, the one before it kept")
	require.False(t, s.w.isLeading(), "the last leader gave the connection up")
}

func (w *writer) isLeading() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.leading
}

// holdRelease returns hold, which a held Update function waits on, and release, which lets
// it go on (also at the test's end — t.Cleanup runs it before the store's Close — so that a
// failed test does not leave Close waiting for it).
func holdRelease(t *testing.T) (hold <-chan struct{}, release func()) {
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)
	return ch, release
}

// Close waits for the batch that runs and the requests queued before it, then refuses.
func TestWriter_CloseWaitsForTheLeaderAndTheQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir()+"/close.db", Options{})
	require.NoError(t, err)
	hold, release := holdRelease(t)
	entered := make(chan struct{})
	errs := make(chan error, 2)
	go func() {
		errs <- s.Update(ctx, func(tx engine.Tx) error { close(entered); <-hold; return tx.SetPaused(ctx, true) })
	}()
	<-entered // the leader's batch is taken: the next Update queues
	go func() { errs <- s.Update(ctx, func(tx engine.Tx) error { return tx.SetPaused(ctx, false) }) }()
	waitQueued(t, s.w, 1)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a batch ran", err)
	case <-time.After(50 * time.Millisecond): // an absence: no sign says Close will not return later
	}
	release()
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	require.NoError(t, <-closed)
	require.ErrorIs(t, s.Update(ctx, func(engine.Tx) error { return nil }), ErrClosed)
}
