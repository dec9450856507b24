package storage

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The prune queries walk indexes, never the whole missions or events table: the candidate
// listing follows missions_state in (state, created_at) order, a mission's events, attempts,
// landings and workspaces are found by their mission id, and the scheduler events' walk is a
// rowid range.
func TestPrunePlans_UseIndexes(t *testing.T) {
	t.Parallel()
	s := openSeeded(t, 20)
	args := []any{sql.Named("state", "completed"), sql.Named("before", 0), sql.Named("created", 0), sql.Named("row", 0), sql.Named("limit", 10)}
	plan := strings.Join(queryPlan(t, s, sqlPruneCandidates, args...), "\n")
	require.Contains(t, plan, "USING INDEX missions_state (state=? AND created_at>? AND created_at<?)")
	require.NotContains(t, plan, "TEMP B-TREE", "no sort of every candidate")
	plan = strings.Join(queryPlan(t, s, sqlPruneSameMs, args...), "\n")
	require.Contains(t, plan, "USING INDEX missions_state (state=? AND created_at=? AND rowid>?)", "the cursor's millisecond is not rescanned")
	for _, st := range pruneStates { // the partial index and the walk name the same states
		require.Contains(t, finishedCond, "'"+string(st)+"'")
	}
	plan = strings.Join(queryPlan(t, s, sqlUnfinishedRelated, sql.Named("id", "x")), "\n")
	for _, idx := range []string{"dependencies_reverse", "missions_parent", "missions_subject"} {
		require.Contains(t, plan, idx, "no scan of every mission")
	}
	for q, want := range map[string]string{
		`DELETE FROM events WHERE mission_id = ?`:     "events_mission",
		`DELETE FROM attempts WHERE mission_id = ?`:   "sqlite_autoindex_attempts_1",
		`DELETE FROM landings WHERE mission_id = ?`:   "sqlite_autoindex_landings_1",
		`DELETE FROM workspaces WHERE mission_id = ?`: "sqlite_autoindex_workspaces_1",
		`DELETE FROM events WHERE voyage_id = ?`:      "events_voyage",
	} {
		plan := strings.Join(queryPlan(t, s, q, "x"), "\n")
		require.Contains(t, plan, want, q)
	}
	plan = strings.Join(queryPlan(t, s, sqlPruneGlobalEvents, sql.Named("before", 0), sql.Named("limit", 10)), "\n")
	require.Contains(t, plan, "INTEGER PRIMARY KEY (rowid<?)", "the walk stops at the cutoff's seq")
}
