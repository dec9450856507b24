package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// voyageActiveFlags reads missions.voyage_active per mission id.
func voyageActiveFlags(t *testing.T, s *Store) map[string]int {
	t.Helper()
	rows, err := s.readDB.Query(`SELECT id, voyage_active FROM missions ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var v int
		require.NoError(t, rows.Scan(&id, &v))
		out[id] = v
	}
	require.NoError(t, rows.Err())
	return out
}

const insertBareMission = `INSERT INTO missions (id, voyage_id, title, brief, repository, state, created_at, updated_at) VALUES (?, ?, 't', '', '/r', 'pending', 0, 0)`

// Issue 13 item 6: missions.voyage_active is the database's copy of the mission's voyage's
// stage as the pick needs it (schema 11: 2 in progress — active or blocked —, 1 open, 0 none
// or finished). A database written before schema 7 with the drift (a
// reopened voyage whose missions kept 0) is repaired by the migration; from then on the
// copy follows every insert and every change of the voyage's state, whoever writes it.
func TestVoyageActive_CopiedFromTheVoyageState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v.db")
	ms, err := migrations()
	require.NoError(t, err)
	db, err := sql.Open("sqlite", dsn(path, Options{}.withDefaults(), true))
	require.NoError(t, err)
	for _, m := range ms[:5] {
		_, err = db.Exec(m.sql)
		require.NoError(t, err, m.name)
	}
	_, err = db.Exec(`INSERT INTO voyages (id, title, repository, state, created_at, updated_at) VALUES
 ('reopened', 't', '/r', 'active', 0, 0), ('open', 't', '/r', 'open', 0, 0), ('done', 't', '/r', 'completed', 0, 0)`)
	require.NoError(t, err)
	for _, m := range [][2]any{{"m_drift", "reopened"}, {"m_open", "open"}, {"m_done", "done"}, {"m_solo", nil}} {
		_, err = db.Exec(insertBareMission, m[0], m[1])
		require.NoError(t, err)
	}
	_, err = db.Exec(`UPDATE missions SET voyage_active = 1 WHERE id = 'm_done'`) // set by an old first start
	require.NoError(t, err)
	_, err = db.Exec(`PRAGMA user_version = 5`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.Equal(t, map[string]int{"m_drift": 2, "m_open": 1, "m_done": 0, "m_solo": 0}, voyageActiveFlags(t, s), "carried over")

	exec := func(q string, args ...any) {
		t.Helper()
		rawExec(t, s, func(tx *sql.Tx) error { _, err := tx.Exec(q, args...); return err })
	}
	exec(insertBareMission, "m_new_active", "reopened")
	exec(insertBareMission, "m_new_open", "open")
	require.Equal(t, 2, voyageActiveFlags(t, s)["m_new_active"], "an insert takes the voyage's state")
	require.Equal(t, 1, voyageActiveFlags(t, s)["m_new_open"], "an open voyage is live too (schema 11)")
	for _, step := range []struct {
		state string
		want  int
	}{{"active", 2}, {"blocked", 2}, {"active", 2}, {"blocked", 2}, {"cancelled", 0}} {
		exec(`UPDATE voyages SET state = ? WHERE id = 'open'`, step.state)
		f := voyageActiveFlags(t, s)
		require.Equal(t, step.want, f["m_open"], "voyage moved to %s", step.state)
		require.Equal(t, step.want, f["m_new_open"], "voyage moved to %s", step.state)
		require.Equal(t, 2, f["m_drift"], "another voyage's missions are left alone")
	}
}
