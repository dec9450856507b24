package storage

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Updates racing Close all return: run before the writer stopped, or ErrClosed. (An Update
// whose request entered the writer's buffered queue after the writer had drained it used to
// wait forever; found by the conformance suite's Close case.)
func TestClose_UpdatesRacingCloseAllReturn(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), t.TempDir()+"/close.db", Options{})
	require.NoError(t, err)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	started := make(chan struct{}, 8)
	for range 8 {
		wg.Go(func() {
			started <- struct{}{}
			for {
				err := s.Update(ctx, func(tx engine.Tx) error { return tx.SetPaused(ctx, false) })
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for range 8 {
		<-started
	}
	require.NoError(t, s.Close())
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	testenv.Receive(t, "every Update racing Close to return", done)
	close(errs)
	for err := range errs {
		require.True(t, errors.Is(err, ErrClosed), "got %v", err)
	}
	require.ErrorIs(t, s.Update(ctx, func(engine.Tx) error { return nil }), ErrClosed)
	require.ErrorIs(t, s.View(ctx, func(engine.Reader) error { return nil }), ErrClosed)
}
