package storage

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// An escalation's once key round-trips and filters; at most one open escalation holds a key
// (the unique index refuses a second, whoever writes it), and a resolved one frees it. The
// lookup goes through the partial index.
func TestEscalationOnceKey_OneOpenPerKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"), Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	esc := func(id, key string) *domain.Escalation {
		return &domain.Escalation{ID: id, MissionIDs: []string{"msn_a"}, Route: domain.RoutePerson, Kind: "checkout",
			Reason: "r", DecisionRequired: "d", State: domain.EscalationOpen, CreatedAt: time.UnixMilli(1000), OnceKey: key}
	}
	insert := func(e *domain.Escalation) error {
		return s.Update(ctx, func(tx engine.Tx) error { return tx.EscalationInsert(ctx, e) })
	}
	byKey := func(key string) []domain.Escalation {
		var out []domain.Escalation
		require.NoError(t, s.View(ctx, func(r engine.Reader) error {
			out, err = r.EscalationList(ctx, engine.EscalationFilter{State: domain.EscalationOpen, OnceKey: key, Limit: 10})
			return err
		}))
		return out
	}
	first := esc("esc_1", "checkout:msn_a")
	require.NoError(t, insert(first))
	require.NoError(t, insert(esc("esc_free", "")), "escalations without a key are not limited")
	require.NoError(t, insert(esc("esc_free2", "")))
	got := byKey("checkout:msn_a")
	require.Len(t, got, 1)
	require.Equal(t, "checkout:msn_a", got[0].OnceKey)
	require.Empty(t, byKey("approval:msn_a"))

	err = insert(esc("esc_2", "checkout:msn_a"))
	require.Error(t, err, "a second open escalation with the same key")
	require.True(t, errors.Is(err, domain.ErrDuplicateID), "%v", err)

	first.State, first.Resolution, first.ResolvedAt = domain.EscalationResolved, "acknowledge", time.UnixMilli(2000)
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error { return tx.EscalationUpdate(ctx, first) }))
	require.Empty(t, byKey("checkout:msn_a"))
	require.NoError(t, insert(esc("esc_3", "checkout:msn_a")), "a resolved escalation frees its key")
	require.Equal(t, "esc_3", byKey("checkout:msn_a")[0].ID)

	var plan string
	rows, err := s.readDB.QueryContext(ctx, "EXPLAIN QUERY PLAN "+escalationListQuery(engine.EscalationFilter{State: domain.EscalationOpen, OnceKey: "k"}),
		sql.Named("state", "open"), sql.Named("voyage", ""), sql.Named("route", ""), sql.Named("cause", ""),
		sql.Named("mission", ""), sql.Named("once", "k"), sql.Named("limit", 1))
	require.NoError(t, err)
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan += detail + "\n"
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	require.Contains(t, plan, "escalations_once")
}

// A schema 5 database keeps its open escalations of the kinds raised once: the earliest of
// each (kind, mission) gets its key, a duplicate (raised again by a restarted leader before
// schema 6) and resolved ones stay without, and other kinds are left alone.
func TestMigrate_OnceKeysOnASchema5Database(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	ms, err := migrations()
	require.NoError(t, err)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	for _, m := range ms[:5] {
		_, err = db.ExecContext(ctx, m.sql)
		require.NoError(t, err, m.name)
	}
	for _, row := range [][]any{
		{"esc_a1", `["msn_a"]`, "checkout", "open", 1000},
		{"esc_a2", `["msn_a"]`, "checkout", "open", 2000}, // the duplicate
		{"esc_a3", `["msn_a"]`, "approval", "open", 1500},
		{"esc_b1", `["msn_b"]`, "no_agent", "resolved", 1000},
		{"esc_b2", `["msn_b"]`, "no_agent", "open", 3000},
		{"esc_c1", `["msn_c"]`, "report", "open", 1000},
		{"esc_d1", `["msn_d","msn_e"]`, "checkout", "open", 1000},
	} {
		_, err = db.ExecContext(ctx, `INSERT INTO escalations (id, mission_ids, route, kind, reason, decision_required, state, created_at)
 VALUES (?, ?, 'person', ?, 'r', 'd', ?, ?)`, row...)
		require.NoError(t, err)
	}
	_, err = db.ExecContext(ctx, "PRAGMA user_version = 5")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	var all []domain.Escalation
	require.NoError(t, s.View(ctx, func(r engine.Reader) error {
		all, err = r.EscalationList(ctx, engine.EscalationFilter{Limit: 100})
		return err
	}))
	keys := map[string]string{}
	for _, e := range all {
		keys[e.ID] = e.OnceKey
	}
	require.Equal(t, map[string]string{"esc_a1": "checkout:msn_a", "esc_a2": "", "esc_a3": "approval:msn_a",
		"esc_b1": "", "esc_b2": "no_agent:msn_b", "esc_c1": "", "esc_d1": ""}, keys)
}
