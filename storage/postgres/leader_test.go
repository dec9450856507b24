package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
)

// TestLeaderTry_TwoNodesRacingNeverBothLead: in each round, contenders on two Stores race
// LeaderTry for a free lease; exactly one takes it, every contender is told that one owner and
// epoch, and the row names it. The winner then resigns, or (every other round) its lease
// runs out: the next round races at a clock past the expiry.
func TestLeaderTry_TwoNodesRacingNeverBothLead(t *testing.T) {
	a, b := openPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	const rounds, perNode = 8, 3
	for round := range rounds {
		got := raceLeader(t, ctx, []*postgres.Store{a, b}, perNode, round, now)
		var winners []string
		for owner, l := range got {
			if l.Owner == owner {
				winners = append(winners, owner)
			}
		}
		require.Len(t, winners, 1, "round %d: exactly one contender leads, got %v", round, winners)
		winner := got[winners[0]]
		for owner, l := range got {
			require.Equal(t, winner.Owner, l.Owner, "round %d: %s was told another leader", round, owner)
			require.Equal(t, winner.Epoch, l.Epoch, "round %d: %s was told another epoch", round, owner)
		}
		require.Equal(t, int64(round+1), winner.Epoch, "each take starts a new epoch")
		require.NoError(t, b.View(ctx, func(r engine.Reader) error {
			l, err := r.LeaderGet(ctx)
			require.Equal(t, winner.Owner, l.Owner)
			return err
		}))
		if round%2 == 1 {
			now = winner.ExpiresAt.Add(time.Millisecond)
			continue
		}
		require.NoError(t, a.Update(ctx, func(tx engine.Tx) error { return tx.LeaderResign(ctx, winner.Owner, winner.Epoch) }))
	}
}

// raceLeader starts perNode contenders on each store at once, each trying to take the lease
// for an hour, and returns the leader row each was told, by contender.
func raceLeader(t *testing.T, ctx context.Context, stores []*postgres.Store, perNode, round int, now time.Time) map[string]engine.Leader {
	t.Helper()
	var mu sync.Mutex
	got := map[string]engine.Leader{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, len(stores)*perNode)
	for n, s := range stores {
		for c := range perNode {
			owner := fmt.Sprintf("r%d-n%d-c%d", round, n, c)
			wg.Go(func() {
				<-start
				var l engine.Leader
				err := s.Update(ctx, func(tx engine.Tx) error {
					var err error
					l, err = tx.LeaderTry(ctx, engine.LeaderTake{Owner: owner, Now: now, TTL: time.Hour, Phase: "test"})
					return err
				})
				errs <- err
				mu.Lock()
				got[owner] = l
				mu.Unlock()
			})
		}
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return got
}
