package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// groupedOutcomes counts attempts the way AttemptOutcomes did before its counters.
func groupedOutcomes(t *testing.T, s *Store) []engine.OutcomeCount {
	t.Helper()
	rows, err := s.readDB.Query(`SELECT profile, persona, count(*), sum(outcome = 'completed')
 FROM attempts WHERE profile <> '' GROUP BY profile, persona ORDER BY profile, persona`)
	require.NoError(t, err)
	defer rows.Close()
	var out []engine.OutcomeCount
	for rows.Next() {
		var c engine.OutcomeCount
		require.NoError(t, rows.Scan(&c.Profile, &c.Persona, &c.Total, &c.Completed))
		out = append(out, c)
	}
	require.NoError(t, rows.Err())
	return out
}

func readOutcomes(t *testing.T, s *Store) []engine.OutcomeCount {
	t.Helper()
	var out []engine.OutcomeCount
	require.NoError(t, s.View(context.Background(), func(r engine.Reader) error {
		var err error
		out, err = r.AttemptOutcomes(context.Background())
		return err
	}))
	return out
}

func readVoyageCounts(t *testing.T, s *Store) map[domain.VoyageState]int {
	t.Helper()
	var out map[domain.VoyageState]int
	require.NoError(t, s.View(context.Background(), func(r engine.Reader) error {
		var err error
		out, err = r.VoyageCounts(context.Background())
		return err
	}))
	return out
}

const insertAttempt = `INSERT INTO attempts (mission_id, attempt, epoch, profile, persona, outcome, ended_at) VALUES (?, ?, 1, ?, ?, ?, 0)`

// A database written by schema 1 gets its counters from the rows it holds, and from then on
// every insert, change and delete of an attempt or voyage keeps them equal to a count of rows.
func TestCounters_BackfilledThenKeptWithTheRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	ms, err := migrations()
	require.NoError(t, err)
	db, err := sql.Open("sqlite", dsn(path, Options{}.withDefaults(), true))
	require.NoError(t, err)
	_, err = db.Exec(ms[0].sql)
	require.NoError(t, err)
	for i, a := range [][3]string{{"ref", "", "completed"}, {"ref", "", "crashed"}, {"ref", "reviewer", "completed"}, {"", "", "completed"}} {
		_, err = db.Exec(insertAttempt, "m_old", i, a[0], a[1], a[2])
		require.NoError(t, err)
	}
	_, err = db.Exec(`INSERT INTO voyages (id, title, repository, state, created_at, updated_at) VALUES ('v1', 't', '/r', 'completed', 0, 0), ('v2', 't', '/r', 'open', 0, 0)`)
	require.NoError(t, err)
	_, err = db.Exec(`PRAGMA user_version = 1`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.Equal(t, []engine.OutcomeCount{{Profile: "ref", Total: 2, Completed: 1}, {Profile: "ref", Persona: "reviewer", Total: 1, Completed: 1}}, readOutcomes(t, s))
	require.Equal(t, map[domain.VoyageState]int{domain.VoyageCompleted: 1, domain.VoyageOpen: 1}, readVoyageCounts(t, s))

	rawExec(t, s, func(tx *sql.Tx) error {
		for i, a := range [][3]string{{"codex", "", "completed"}, {"ref", "", "completed"}, {"codex", "p", "failed"}} {
			if _, err := tx.Exec(insertAttempt, "m_new", i, a[0], a[1], a[2]); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(`UPDATE attempts SET outcome = 'completed', persona = 'q' WHERE mission_id = 'm_new' AND attempt = 2`); err != nil {
			return err
		}
		if _, err := tx.Exec(`DELETE FROM attempts WHERE mission_id = 'm_old' AND attempt = 0`); err != nil {
			return err
		}
		_, err := tx.Exec(`UPDATE voyages SET state = 'completed' WHERE id = 'v2'`)
		return err
	})
	require.Equal(t, groupedOutcomes(t, s), readOutcomes(t, s))
	require.Equal(t, map[domain.VoyageState]int{domain.VoyageCompleted: 2}, readVoyageCounts(t, s))
	rawExec(t, s, func(tx *sql.Tx) error {
		_, err := tx.Exec(`DELETE FROM attempts`)
		return err
	})
	require.Empty(t, readOutcomes(t, s))
}
