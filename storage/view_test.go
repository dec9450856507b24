package storage

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// A View whose statement is not prepared yet must not wait for another read connection while
// it holds one: with every read connection inside a View (here the only one), preparing on
// the pool deadlocked (found by the lifecycle benchmark: 64 goroutines heartbeating on a
// fresh store).
func TestView_FirstUseOfAStatementWithEveryReadConnectionBusy(t *testing.T) {
	t.Parallel()
	for _, readers := range []int{1, 4} {
		s, err := Open(context.Background(), t.TempDir()+"/view.db", Options{Readers: readers})
		require.NoError(t, err)
		ctx, cancel := context.WithDeadline(context.Background(), testenv.WaitDeadline(t)) // a deadlock ends here
		var wg sync.WaitGroup
		errs := make(chan error, 4*readers)
		start := make(chan struct{})
		var inside atomic.Int32
		allTaken := make(chan struct{})
		for g := 0; g < 4*readers; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs <- s.View(ctx, func(r engine.Reader) error {
					if inside.Add(1) == int32(readers) {
						close(allTaken)
					}
					select { // every connection is taken before anyone prepares
					case <-allTaken:
					case <-ctx.Done():
						return ctx.Err()
					}
					_, err := r.MissionCounts(ctx)
					return err
				})
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err, "readers=%d", readers)
		}
		cancel()
		require.NoError(t, s.Close())
	}
}
