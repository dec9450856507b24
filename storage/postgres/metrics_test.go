package postgres

import (
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// TestMetricCounts_CountersAgreeAfterConcurrentWriters: writers on several connections insert
// missions and move them between states at the same time (serializable transactions, retried
// as Update retries them); the trigger-kept counters MetricCounts reads then agree with a
// count of the rows: no increment is lost.
func TestMetricCounts_CountersAgreeAfterConcurrentWriters(t *testing.T) {
	ctx := testCtx(t)
	pool := migratedPool(t, ctx)
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("m%d-%02d", w, i)
				errs <- serializable(ctx, pool, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, `INSERT INTO missions (id, title, brief, repository, state, created_at, updated_at)
 VALUES ($1, 't', 'b', '/r', 'pending', 1, 1)`, id); err != nil {
						return err
					}
					next := []string{"running", "completed", "failed"}[i%3]
					_, err := tx.Exec(ctx, `UPDATE missions SET state = $1 WHERE id = $2 AND $3 = 0`, next, id, i%2)
					return err
				})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	rows, err := pool.Query(ctx, `SELECT state, count(*) FROM missions GROUP BY state`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[domain.MissionState]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		want[domain.MissionState(s)] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	inTxn(t, ctx, pool, func(tx *txn) error {
		got, err := tx.MetricCounts(ctx)
		if err != nil {
			return err
		}
		total := 0
		for s, n := range got.Missions {
			total += n
			if n != want[s] {
				t.Errorf("mission_counts[%s] = %d, the rows say %d", s, n, want[s])
			}
		}
		if total != writers*each {
			t.Errorf("mission_counts sum to %d, want %d", total, writers*each)
		}
		return nil
	})
}
