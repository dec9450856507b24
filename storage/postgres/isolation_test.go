package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// TestAcquire_SerializableIsWhatKeepsAnExclusiveMissionAlone interleaves two acquires by hand
// on two connections, as two nodes would: both begin, A leases mission a, B (whose snapshot
// does not see A's lease) looks for work in the same repository, then both commit. Missions
// a and b have no write area, so each is exclusive in the repository: at most one may be
// live. At REPEATABLE READ B leases b and both commit — the rule broken, which is why the
// store does not run at that level (and since schema 18 no shared counter row makes the two
// collide by chance: each session counts in its own shard). At SERIALIZABLE, the store's
// level, PostgreSQL aborts B (40001), and exactly one mission is live.
func TestAcquire_SerializableIsWhatKeepsAnExclusiveMissionAlone(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	st, err := Open(ctx, url, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(t, st.Update(ctx, func(tx engine.Tx) error {
		for i, id := range []string{"a", "b"} {
			created := t0.Add(time.Duration(i) * time.Millisecond)
			if err := tx.MissionInsert(ctx, &domain.Mission{ID: id, Title: id, Brief: id, Repository: "/repo", Priority: 100,
				Kind: domain.KindWork, Review: "none", State: domain.StatePending, Landing: domain.LandingNone,
				CreatedAt: created, UpdatedAt: created}); err != nil {
				return err
			}
		}
		return nil
	}))
	a, b := twoSessions(t, url)
	for _, c := range []struct {
		iso        pgx.TxIsoLevel
		wantLive   int
		wantBAbort bool
	}{{pgx.RepeatableRead, 2, false}, {pgx.Serializable, 1, true}} {
		t.Run(string(c.iso), func(t *testing.T) {
			_, err := a.Exec(ctx, "UPDATE missions SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL")
			require.NoError(t, err)
			q := engine.AcquireQuery{Now: t0.Add(time.Hour), LeaseTTL: time.Minute, Start: true}
			txA, err := a.BeginTx(ctx, pgx.TxOptions{IsoLevel: c.iso})
			require.NoError(t, err)
			txB, err := b.BeginTx(ctx, pgx.TxOptions{IsoLevel: c.iso})
			require.NoError(t, err)
			_, err = txB.Exec(ctx, "SELECT 1") // B's snapshot: before A's lease commits
			require.NoError(t, err)
			q.Owner = "node-a"
			gotA, err := (&txn{q: txA}).MissionAcquire(ctx, q)
			require.NoError(t, err)
			require.Equal(t, "a", gotA.ID, "A takes the first mission in pick order")
			q.Owner = "node-b"
			gotB, errB := (&txn{q: txB}).MissionAcquire(ctx, q)
			require.NoError(t, txA.Commit(ctx))
			if errB == nil {
				require.Equal(t, "b", gotB.ID)
				errB = txB.Commit(ctx)
			} else {
				_ = txB.Rollback(ctx)
			}
			if c.wantBAbort {
				require.Error(t, errB, "B must not commit a second live mission")
				require.True(t, retryable(errB), "B fails as a serialization failure, which Update runs again: %v", errB)
			} else {
				require.NoError(t, errB, "at %s nothing stops B", c.iso)
			}
			var live int
			require.NoError(t, a.QueryRow(ctx, "SELECT count(*) FROM missions WHERE state IN ('leased','running')").Scan(&live))
			require.Equal(t, c.wantLive, live)
		})
	}
}

// twoSessions opens two connections to url whose counter shards differ (so that the test
// shows the isolation at work, not two writers colliding on one counter row).
func twoSessions(t *testing.T, url string) (*pgx.Conn, *pgx.Conn) {
	ctx := context.Background()
	var conns []*pgx.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close(ctx)
		}
	})
	shard := func(c *pgx.Conn) int64 {
		var s int64
		require.NoError(t, c.QueryRow(ctx, "SELECT counter_shard()").Scan(&s))
		return s
	}
	first, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	conns = append(conns, first)
	for range 8 {
		c, err := pgx.Connect(ctx, url)
		require.NoError(t, err)
		conns = append(conns, c)
		if shard(c) != shard(first) {
			return first, c
		}
	}
	t.Fatal("eight connections in a row shared the first one's counter shard")
	return nil, nil
}
