package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPlans_PartialIndexesApplyToGenericPlans: the statements meant to read a partial index
// of live or unsettled rows (so that their cost does not grow with history) can use it in a
// generic plan, the one PostgreSQL may cache for a prepared statement, where a parameter
// proves nothing about the index's WHERE. With sequential scans priced out, a plan that
// cannot use the index shows a Seq Scan instead of it.
func TestPlans_PartialIndexesApplyToGenericPlans(t *testing.T) {
	ctx := testCtx(t)
	pool := migratedPool(t, ctx)
	prune := pgx.NamedArgs{"state": "failed", "before": int64(10), "created": int64(1), "id": "m", "limit": 5}
	for _, c := range []struct {
		name, sql, index string
		args             []any
	}{
		{"landing queue", sqlLandingQueue, "missions_landing_queue", []any{10}},
		{"landings awaiting", sqlLandingAwaiting, "missions_landing_awaiting", []any{10}},
		{"notices due", sqlNoticesDue, "notices_due", []any{int64(5), 10}},
		{"notices given up", sqlNoticesGaveUp, "notices_gave_up", []any{10}},
		{"prune walk", sqlPruneCandidates, "missions_state", []any{prune}},
		{"prune walk in one millisecond", sqlPruneSameMs, "missions_state", []any{prune}},
		{"metrics: landing queue", sqlMetricCounts, "missions_landing_queue", nil},
		{"metrics: landings awaiting", sqlMetricCounts, "missions_landing_awaiting", nil},
		{"metrics: live missions", sqlMetricCounts, "missions_live", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := genericPlan(t, pool, c.sql, c.args...)
			if !regexp.MustCompile(`(using|on) ` + regexp.QuoteMeta(c.index) + `(\s|$)`).MatchString(plan) {
				t.Errorf("the generic plan does not use %s:\n%s", c.index, plan)
			}
		})
	}
}

// probes numbers genericPlan's prepared statements (tests of this file run one at a time).
var probes int

// genericPlan prepares q (named arguments rewritten to $n) on one connection and returns
// EXPLAIN EXECUTE's plan of it with args, planned generically and without sequential scans.
func genericPlan(t *testing.T, pool interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}, q string, args ...any) string {
	t.Helper()
	ctx := testCtx(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if len(args) == 1 {
		if na, ok := args[0].(pgx.NamedArgs); ok {
			if q, args, err = na.RewriteQuery(ctx, tx.Conn(), q, args); err != nil {
				t.Fatal(err)
			}
		}
	}
	probes++
	name := fmt.Sprintf("plan_probe_%d", probes) // a prepared statement outlives its transaction
	for _, s := range []string{`SET LOCAL plan_cache_mode = force_generic_plan`, `SET LOCAL enable_seqscan = off`,
		`PREPARE ` + name + ` AS ` + q} {
		if _, err := tx.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	explain := `EXPLAIN EXECUTE ` + name // EXECUTE takes no bound parameters: its arguments are literals
	if len(args) > 0 {
		lits := make([]string, len(args))
		for i, a := range args {
			if s, ok := a.(string); ok {
				lits[i] = "'" + strings.ReplaceAll(s, "'", "''") + "'"
			} else {
				lits[i] = fmt.Sprint(a)
			}
		}
		explain += `(` + strings.Join(lits, ", ") + `)`
	}
	rows, err := tx.Query(ctx, explain)
	if err != nil {
		t.Fatalf("%s: %v", explain, err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
