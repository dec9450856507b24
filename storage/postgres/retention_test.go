package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// migratedPool is a pool on a fresh, migrated database of the test server.
func migratedPool(t *testing.T, ctx context.Context) *pgxpool.Pool {
	t.Helper()
	pool := newPool(t, ctx)
	if err := Migrate(ctx, pool, quiet); err != nil {
		t.Fatal(err)
	}
	return pool
}

// execAll runs seeding statements, failing t on the first error.
func execAll(t *testing.T, ctx context.Context, pool *pgxpool.Pool, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// inTxn runs fn on a txn of one committed serializable transaction.
func inTxn(t *testing.T, ctx context.Context, pool *pgxpool.Pool, fn func(tx *txn) error) {
	t.Helper()
	if err := serializable(ctx, pool, func(tx pgx.Tx) error { return fn(&txn{q: tx}) }); err != nil {
		t.Fatal(err)
	}
}

// TestPruneCandidates_PagesThroughOneMillisecondByID: PostgreSQL has no rowid, so the cursor
// orders the missions of one millisecond by id; a page boundary inside that millisecond, and
// ids holding the cursor's separator, neither repeat nor skip a mission.
func TestPruneCandidates_PagesThroughOneMillisecondByID(t *testing.T) {
	ctx := testCtx(t)
	pool := migratedPool(t, ctx)
	var want []string
	for i := range 12 {
		id := fmt.Sprintf("m:%02d:x", 11-i) // inserted in descending id order, all at 5 ms
		want = append([]string{id}, want...)
		execAll(t, ctx, pool, fmt.Sprintf(`INSERT INTO missions (id, title, brief, repository, state, created_at, updated_at)
 VALUES ('%s', 't', 'b', '/r', 'completed', 5, 5)`, id))
	}
	execAll(t, ctx, pool,
		`INSERT INTO missions (id, title, brief, repository, state, created_at, updated_at) VALUES
 ('early', 't', 'b', '/r', 'completed', 4, 4), ('f1', 't', 'b', '/r', 'failed', 5, 5),
 ('late', 't', 'b', '/r', 'completed', 50, 50), ('live', 't', 'b', '/r', 'pending', 1, 1)`)
	want = append(append([]string{"early"}, want...), "f1")
	for _, limit := range []int{1, 5, 100} {
		var got []string
		cursor := ""
		for range 100 {
			var page []engine.PruneCandidate
			inTxn(t, ctx, pool, func(tx *txn) error {
				var err error
				page, err = tx.PruneCandidates(ctx, engine.PruneQuery{Before: time.UnixMilli(10), Cursor: cursor, Limit: limit})
				return err
			})
			if len(page) == 0 {
				break
			}
			for _, c := range page {
				got = append(got, c.ID)
			}
			cursor = page[len(page)-1].Cursor
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("limit %d: walked %v, want %v", limit, got, want)
		}
	}
}

// TestPrune_RefusalsKeepTheTransactionUsable: MissionPrune of a gone mission (ErrNotFound)
// and VoyagePrune of a voyage with missions (ErrGuard) fail no statement, so the engine's
// prune walk can go on in the same transaction, which then commits; the pruned mission's
// rows that reference it by foreign key went with it.
func TestPrune_RefusalsKeepTheTransactionUsable(t *testing.T) {
	ctx := testCtx(t)
	pool := migratedPool(t, ctx)
	execAll(t, ctx, pool,
		`INSERT INTO voyages (id, title, repository, state, created_at, updated_at) VALUES ('v1', 'v', '/r', 'completed', 1, 1)`,
		`INSERT INTO missions (id, voyage_id, title, brief, repository, state, created_at, updated_at) VALUES
 ('m1', NULL, 't', 'b', '/r', 'completed', 1, 1), ('m2', NULL, 't', 'b', '/r', 'pending', 1, 1),
 ('m3', 'v1', 't', 'b', '/r', 'completed', 1, 1)`,
		`INSERT INTO dependencies (mission_id, depends_on, type, source, created_at) VALUES ('m2', 'm1', 'hard', 'user', 1)`,
		`INSERT INTO write_areas (mission_id, repository, prefix) VALUES ('m1', '/r', 'a/')`,
		`INSERT INTO holds (mission_id, code, message, since, updated_at) VALUES ('m1', 'c', 'm', 1, 1)`,
		`INSERT INTO usage_running (mission_id, attempt, epoch, updated_at) VALUES ('m1', 1, 1, 1)`,
		`INSERT INTO events (at, type, mission_id) VALUES (1, 'x', 'm1'), (1, 'x', 'm2')`,
		`INSERT INTO escalations (id, mission_ids, route, kind, reason, decision_required, state, created_at) VALUES
 ('e1', '["m1"]', 'person', 'k', 'r', 'd', 'resolved', 1), ('e2', '["m1","m2"]', 'person', 'k', 'r', 'd', 'resolved', 1)`)
	inTxn(t, ctx, pool, func(tx *txn) error {
		c, err := tx.MissionPrune(ctx, "m1")
		if err != nil {
			return err
		}
		if want := (engine.PruneCounts{Missions: 1, Events: 1, Escalations: 1}); c != want {
			t.Errorf("pruning m1 removed %+v, want %+v", c, want)
		}
		if _, err := tx.MissionPrune(ctx, "m1"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("pruning m1 again: %v, want ErrNotFound", err)
		}
		if _, err := tx.VoyagePrune(ctx, "v1"); !errors.Is(err, domain.ErrGuard) {
			t.Errorf("pruning v1 with m3 in it: %v, want ErrGuard", err)
		}
		if _, err := tx.MissionPrune(ctx, "m3"); err != nil {
			return err
		}
		c, err = tx.VoyagePrune(ctx, "v1")
		if c.Voyages != 1 {
			t.Errorf("pruning the emptied v1 removed %+v", c)
		}
		return err
	})
	for q, want := range map[string]int{
		`SELECT count(*) FROM dependencies`: 0, `SELECT count(*) FROM write_areas`: 0,
		`SELECT count(*) FROM holds`: 0, `SELECT count(*) FROM usage_running`: 0,
		`SELECT count(*) FROM escalations WHERE id = 'e2'`: 1, // it concerns m2, still stored
	} {
		var n int
		if err := pool.QueryRow(ctx, q).Scan(&n); err != nil || n != want {
			t.Errorf("%s after the prune: %d, want %d (%v)", q, n, want, err)
		}
	}
}

// TestPruneGlobal_NegativeLimitIsNone: a negative limit deletes every old row, as SQLite's
// LIMIT -1 does (PostgreSQL refuses a negative LIMIT), and rows from before keep.
func TestPruneGlobal_NegativeLimitIsNone(t *testing.T) {
	ctx := testCtx(t)
	pool := migratedPool(t, ctx)
	execAll(t, ctx, pool,
		`INSERT INTO waves (at, runnable) VALUES (1, 0), (2, 0), (3, 0), (100, 0)`,
		`INSERT INTO events (at, type) VALUES (1, 'x'), (2, 'x'), (100, 'x')`,
		`INSERT INTO events (at, type, mission_id) VALUES (1, 'x', 'gone')`)
	inTxn(t, ctx, pool, func(tx *txn) error {
		c, err := tx.PruneGlobal(ctx, time.UnixMilli(50), -1)
		if want := (engine.PruneCounts{Waves: 3, Events: 2}); err == nil && c != want {
			t.Errorf("PruneGlobal(-1) removed %+v, want %+v", c, want)
		}
		return err
	})
}
