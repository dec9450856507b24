package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// TestSentinels_LeaveTheTransactionUsable: a failed statement aborts a PostgreSQL
// transaction, but the engine goes on after some sentinels inside one Update (a duplicate
// conflict edge, a guard miss). Each of them here is followed by a write in the same
// transaction, which must commit.
func TestSentinels_LeaveTheTransactionUsable(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	keyed := nodeMission("a", nodeT0)
	keyed.IdempotencyKey = "k"
	insertMissions(t, s, true, keyed, nodeMission("b", nodeT0))
	var errs []error
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
		errs = append(errs, tx.MissionInsert(ctx, nodeMission("a", nodeT0)))
		other := nodeMission("c", nodeT0)
		other.IdempotencyKey = "k"
		errs = append(errs, tx.MissionInsert(ctx, other))
		errs = append(errs, tx.DependencyInsert(ctx, domain.Dependency{MissionID: "b", DependsOn: "a",
			Type: domain.EdgeConflict, Source: domain.SourceScheduler, CreatedAt: nodeT0}))
		stale := nodeMission("a", nodeT0)
		errs = append(errs, tx.MissionSet(ctx, engine.MissionChange{Row: stale,
			From: engine.Guard{State: domain.StateRunning}, Set: engine.FieldTitle}))
		_, err := tx.MissionRenew(ctx, domain.Fence{MissionID: "a", Epoch: 1}, nodeT0, true)
		errs = append(errs, err)
		errs = append(errs, tx.MissionDelete(ctx, "nope"))
		return tx.MissionInsert(ctx, nodeMission("d", nodeT0))
	}))
	want := []error{domain.ErrDuplicateID, domain.ErrDuplicateID, domain.ErrDuplicateID, domain.ErrGuard,
		domain.ErrGuard, domain.ErrNotFound}
	require.Len(t, errs, len(want))
	for i, err := range errs {
		require.True(t, errors.Is(err, want[i]), "step %d: %v, want %v", i, err, want[i])
	}
	require.Contains(t, errs[0].Error(), "missions_pkey")
	require.Contains(t, errs[1].Error(), "idempotency key")
	require.NoError(t, s.View(ctx, func(r engine.Reader) error {
		_, err := r.MissionGet(ctx, "d")
		require.NoError(t, err, "the write after the sentinels committed")
		_, err = r.MissionGet(ctx, "c")
		require.ErrorIs(t, err, domain.ErrNotFound, "the duplicate key inserted nothing")
		c, err := r.MissionCounts(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, c[domain.StatePending])
		return nil
	}))
}
