package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// queryPlan returns the EXPLAIN QUERY PLAN lines of q on s's read pool.
func queryPlan(t *testing.T, s *Store, q string, args ...any) []string {
	t.Helper()
	rows, err := s.readDB.Query("EXPLAIN QUERY PLAN "+q, args...)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		out = append(out, detail)
	}
	require.NoError(t, rows.Err())
	return out
}

func openSeeded(t *testing.T, n int) *Store {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir()+"/plan.db", Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	e := engine.New(s, engine.Options{DefaultRepository: "/repo"})
	for i := 0; i < n; i++ {
		_, err := e.CreateMission(ctx, engine.MissionSpec{Title: "m", WriteArea: []string{fmt.Sprintf("w%d/**", i)}}, "test")
		require.NoError(t, err)
	}
	return s
}

// The acquire statement walks missions_pick in pick order (no sort of every pending mission),
// so with LIMIT 1 it stops at the first runnable mission.
func TestAcquirePlan_WalksPickIndexInOrder(t *testing.T) {
	t.Parallel()
	s := openSeeded(t, 50)
	now := time.Now().UnixMilli()
	plan := queryPlan(t, s, sqlAcquireNext, sql.Named("now", now), sql.Named("nowms", now), sql.Named("start", 0),
		sql.Named("owner", "a"), sql.Named("exp", now), sql.Named("profile", "a"), sql.Named("node", ""), sql.Named("id", ""),
		sql.Named("repo", ""), sql.Named("kinds", nil), sql.Named("personas", nil), sql.Named("caps", "[]"), sql.Named("exclude", nil))
	all := strings.Join(plan, "\n")
	require.Contains(t, all, "SCAN m USING INDEX missions_pick", all)
	require.NotContains(t, all, "TEMP B-TREE", all)
	for _, l := range plan {
		if strings.Contains(l, "SCAN ") && !strings.Contains(l, "VIRTUAL TABLE") {
			require.Contains(t, l, "missions_pick", "the only table scan is the pick index: %s", all)
		}
	}
	for _, l := range plan {
		// Each candidate looks up its edges' missions by id and its repository's live
		// missions in missions_live: never a walk of every leased mission (missions_state_id)
		// or of the repository's history, which made acquire O(leased) per candidate.
		if strings.HasPrefix(l, "SEARCH u ") {
			require.Contains(t, l, "id=?)", "an edge's mission is found by id: %s", all)
		}
		if strings.HasPrefix(l, "SEARCH o ") {
			require.Contains(t, l, "missions_live", "the repository's live missions: %s", all)
		}
	}
	plan = queryPlan(t, s, sqlRunnableOrder, 10)
	require.Contains(t, strings.Join(plan, "\n"), "missions_pick")
	require.NotContains(t, strings.Join(plan, "\n"), "TEMP B-TREE")
}

// Finding write-area overlaps searches the primary key twice instead of scanning the
// repository.
func TestWriteAreaOverlapPlan_SearchesIndexTwice(t *testing.T) {
	t.Parallel()
	s := openSeeded(t, 20)
	plan := queryPlan(t, s, sqlWriteAreaOverlap, "/repo", `["","w","w1"]`, "w1", "w1\U0010FFFF")
	all := strings.Join(plan, "\n")
	require.Contains(t, all, "SEARCH write_areas USING PRIMARY KEY (repository=? AND prefix=?)", all)
	require.Contains(t, all, "SEARCH write_areas USING PRIMARY KEY (repository=? AND prefix>? AND prefix<?)", all)
	require.NotContains(t, all, "SCAN write_areas", all)
}
