package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// TestSpendDayAdd_ConcurrentNodesLoseNoSpend: two Stores on one database (two nodes), each
// with two writers, add to one profile's day at the same time; every addition is in the sum.
func TestSpendDayAdd_ConcurrentNodesLoseNoSpend(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	var stores []*postgres.Store
	for range 2 {
		s, err := postgres.Open(ctx, url, postgres.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })
		stores = append(stores, s)
	}
	const each = 25
	add := domain.Usage{InputTokens: 3, OutputTokens: 5, CacheReadTokens: 7, CacheWriteTokens: 11, CostUSD: 0.001}
	var wg sync.WaitGroup
	errs := make(chan error, 4*each)
	for _, s := range []*postgres.Store{stores[0], stores[1], stores[0], stores[1]} {
		wg.Go(func() {
			for range each {
				errs <- s.Update(ctx, func(tx engine.Tx) error { return tx.SpendDayAdd(ctx, "p", "2026-12-01", add) })
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var got domain.Usage
	require.NoError(t, stores[1].View(ctx, func(r engine.Reader) error {
		var err error
		got, err = r.SpendDayGet(ctx, "p", "2026-12-01")
		return err
	}))
	const n = 4 * each
	require.Equal(t, domain.Usage{InputTokens: 3 * n, OutputTokens: 5 * n, CacheReadTokens: 7 * n,
		CacheWriteTokens: 11 * n, CostUSD: 0.1}, got)
}
