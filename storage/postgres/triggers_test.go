package postgres

import (
	"strings"
	"testing"
)

// TestTriggers_KeepDerivedColumns: the triggers SQLite has keep the same derived data here:
// per-state counters, missions.voyage_active from the voyage's state, attempt outcome
// counters, and an append-only events table.
func TestTriggers_KeepDerivedColumns(t *testing.T) {
	ctx := testCtx(t)
	pool := newPool(t, ctx)
	if err := Migrate(ctx, pool, quiet); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	one := func(q string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := pool.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	exec(`INSERT INTO voyages (id, title, repository, state, created_at, updated_at) VALUES ('v1','v','r','open',1,1)`)
	exec(`INSERT INTO missions (id, voyage_id, title, brief, repository, state, created_at, updated_at)
VALUES ('m1','v1','t','b','r','pending',1,1), ('m2',NULL,'t','b','r','pending',1,1)`)
	if got := one(`SELECT voyage_active FROM missions WHERE id = 'm1'`); got != 1 {
		t.Errorf("voyage_active of a mission of an open voyage: %d, want 1", got)
	}
	exec(`UPDATE voyages SET state = 'active' WHERE id = 'v1'`)
	if got := one(`SELECT voyage_active FROM missions WHERE id = 'm1'`); got != 2 {
		t.Errorf("voyage_active after the voyage became active: %d, want 2", got)
	}
	exec(`UPDATE voyages SET state = 'completed' WHERE id = 'v1'`)
	if got := one(`SELECT voyage_active FROM missions WHERE id = 'm1'`); got != 0 {
		t.Errorf("voyage_active after the voyage completed: %d, want 0", got)
	}
	exec(`UPDATE missions SET state = 'running' WHERE id = 'm2'`)
	exec(`DELETE FROM missions WHERE id = 'm1'`)
	if p, r := one(`SELECT sum(n)::bigint FROM mission_counts WHERE state = 'pending'`), one(`SELECT sum(n)::bigint FROM mission_counts WHERE state = 'running'`); p != 0 || r != 1 {
		t.Errorf("mission_counts pending %d running %d, want 0 and 1", p, r)
	}
	if c, o := one(`SELECT sum(n)::bigint FROM voyage_counts WHERE state = 'completed'`), one(`SELECT sum(n)::bigint FROM voyage_counts WHERE state = 'open'`); c != 1 || o != 0 {
		t.Errorf("voyage_counts completed %d open %d, want 1 and 0", c, o)
	}
	exec(`INSERT INTO attempts (mission_id, attempt, epoch, profile, persona, outcome, ended_at)
VALUES ('m2',1,1,'p','x','completed',1), ('m2',2,2,'p','x','failed',1), ('m2',3,3,'','x','failed',1)`)
	exec(`UPDATE attempts SET outcome = 'completed' WHERE attempt = 2`)
	if tot, done := one(`SELECT sum(total)::bigint FROM attempt_outcomes WHERE profile = 'p'`), one(`SELECT sum(completed)::bigint FROM attempt_outcomes WHERE profile = 'p'`); tot != 2 || done != 2 {
		t.Errorf("attempt_outcomes total %d completed %d, want 2 and 2", tot, done)
	}
	exec(`INSERT INTO events (at, type) VALUES (1, 'x')`)
	_, err := pool.Exec(ctx, `UPDATE events SET type = 'y'`)
	if err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("updating an event: %v, want the append-only refusal", err)
	}
}
