package postgres

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestSerializable_RetriesWriteSkew: two transactions that each check "no row is on" and then
// turn one on would both succeed under READ COMMITTED (write skew). Under serializable the
// one PostgreSQL aborts runs again, sees the other's row and does nothing: exactly one row is
// on, neither caller gets an error, and at least one retry happened.
func TestSerializable_RetriesWriteSkew(t *testing.T) {
	ctx := testCtx(t)
	pool := newPool(t, ctx)
	if _, err := pool.Exec(ctx, "CREATE TABLE flags (id INT PRIMARY KEY, on_ BOOLEAN NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	var bothRead sync.WaitGroup
	bothRead.Add(2)
	var runs atomic.Int32
	turnOn := func(id int, first *bool) func(pgx.Tx) error {
		return func(tx pgx.Tx) error {
			runs.Add(1)
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM flags WHERE on_").Scan(&n); err != nil {
				return err
			}
			if *first { // both first runs read before either writes
				*first = false
				bothRead.Done()
				bothRead.Wait()
			}
			if n > 0 {
				return nil
			}
			_, err := tx.Exec(ctx, "INSERT INTO flags VALUES ($1, true)", id)
			return err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			errs[i] = serializable(ctx, pool, turnOn(i, &first))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	var on int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM flags WHERE on_").Scan(&on); err != nil {
		t.Fatal(err)
	}
	if on != 1 {
		t.Fatalf("%d rows on, want 1", on)
	}
	if runs.Load() < 3 {
		t.Fatalf("%d runs: no transaction was retried, so the conflict was never exercised", runs.Load())
	}
}
