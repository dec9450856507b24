package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// openPair opens two Stores on one fresh database, as two nodes would hold it, both closed
// when t ends.
func openPair(t *testing.T) (a, b *postgres.Store) {
	t.Helper()
	url := pgtest.Database(t)
	open := func() *postgres.Store {
		s, err := postgres.Open(context.Background(), url, postgres.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })
		return s
	}
	return open(), open()
}

// TestEventAppend_FollowersOfTwoNodesSeeEveryEventOnce: writers on two Stores append events
// concurrently (two per transaction) while a follower reads the log as the engine does,
// EventList after the last seq it saw. The follower must see strictly increasing seqs and
// every committed event exactly once: a seq made visible after a higher one would be skipped.
func TestEventAppend_FollowersOfTwoNodesSeeEveryEventOnce(t *testing.T) {
	a, b := openPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const writersPerNode, updates = 3, 40
	var want []string
	var wg sync.WaitGroup
	errs := make(chan error, 2*writersPerNode)
	for n, s := range []*postgres.Store{a, b} {
		for w := range writersPerNode {
			actor := fmt.Sprintf("n%d-w%d", n, w)
			for i := range updates {
				want = append(want, fmt.Sprintf("%s-%d-a", actor, i), fmt.Sprintf("%s-%d-b", actor, i))
			}
			wg.Go(func() { errs <- appendEvents(ctx, s, actor, updates) })
		}
	}
	var done atomic.Bool
	go func() { wg.Wait(); done.Store(true) }()
	seen := follow(t, ctx, a, &done)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, id := range want {
		require.Equal(t, 1, seen[id], "event %s seen %d times by the follower", id, seen[id])
	}
	require.Len(t, seen, len(want))
}

// appendEvents runs updates transactions on s, each appending two events named for actor.
func appendEvents(ctx context.Context, s *postgres.Store, actor string, updates int) error {
	for i := range updates {
		err := s.Update(ctx, func(tx engine.Tx) error {
			for _, k := range []string{"a", "b"} {
				e := &domain.Event{At: time.Now(), Type: "test", Actor: fmt.Sprintf("%s-%d-%s", actor, i, k)}
				if err := tx.EventAppend(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s update %d: %w", actor, i, err)
		}
	}
	return nil
}

// follow reads s's event log after the last seq seen until the writers are done and a read
// that started after that finds nothing new; it returns how often each actor was seen.
func follow(t *testing.T, ctx context.Context, s *postgres.Store, done *atomic.Bool) map[string]int {
	t.Helper()
	seen := map[string]int{}
	var last int64
	for {
		finished := done.Load()
		var got []domain.Event
		require.NoError(t, s.View(ctx, func(r engine.Reader) error {
			var err error
			got, err = r.EventList(ctx, engine.EventFilter{AfterSeq: last, Limit: 50})
			return err
		}))
		for _, e := range got {
			require.Greater(t, e.Seq, last, "seqs must grow in the order the follower reads them")
			last = e.Seq
			seen[e.Actor]++
		}
		if finished && len(got) == 0 {
			return seen
		}
	}
}
