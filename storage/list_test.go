package storage

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// listFilters is every list_missions filter alone, in pairs with a state filter, with
// several states, and with a cursor.
func listFilters() map[string]engine.MissionFilter {
	one := map[string]engine.MissionFilter{
		"none":        {},
		"state":       {States: []domain.MissionState{domain.StatePending}},
		"states":      {States: []domain.MissionState{domain.StateCompleted, domain.StateFailed, domain.StatePending}},
		"voyage":      {VoyageID: "vyg_1"},
		"repository":  {Repository: "/r1"},
		"persona":     {Persona: "reviewer"},
		"kind":        {Kind: domain.KindReview},
		"parent":      {ParentID: "m_0003"},
		"subject":     {SubjectID: "m_0004"},
		"landing":     {Landing: domain.LandingPending},
		"landingnone": {Landing: domain.LandingNone},
	}
	out := map[string]engine.MissionFilter{}
	for k, f := range one {
		out[k] = f
		g := f
		g.Cursor = "m_0010"
		out[k+"+cursor"] = g
		if len(f.States) == 0 {
			g := f
			g.States = []domain.MissionState{domain.StateCompleted}
			out[k+"+state"] = g
			g.States = []domain.MissionState{domain.StateCompleted, domain.StateFailed}
			out[k+"+states"] = g
		}
	}
	out["repository+persona+kind"] = engine.MissionFilter{Repository: "/r1", Persona: "reviewer", Kind: domain.KindReview}
	out["voyage+landing+persona"] = engine.MissionFilter{VoyageID: "vyg_1", Landing: domain.LandingNone, Persona: "p"}
	return out
}

// Every list_missions filter, alone and combined, is served by an index in id order: no
// walk of the whole missions table and no sort of every mission that matches.
func TestMissionListPlan_EveryFilterUsesAnIndex(t *testing.T) {
	t.Parallel()
	s := openSeeded(t, 5)
	for name, f := range listFilters() {
		q, args := missionListQuery(f)
		plan := strings.Join(queryPlan(t, s, q, args...), "\n")
		if name == "none" || name == "none+cursor" { // no filter: the key from the cursor, LIMIT rows
			require.Contains(t, plan, "SEARCH missions USING INDEX sqlite_autoindex_missions_1 (id>?)", plan)
			continue
		}
		require.Empty(t, fullScans(t, s, q, args...), "%s:\n%s\n%s", name, q, plan)
		require.Contains(t, plan, "SEARCH missions USING", "%s:\n%s", name, plan)
		if len(f.States) < 2 {
			require.NotContains(t, plan, "TEMP B-TREE FOR ORDER BY", "%s: walks its index in id order:\n%s", name, plan)
		} else { // each state's branch walks its index in id order; only their pages are merged
			require.Contains(t, plan, "MERGE (UNION ALL)", "%s:\n%s", name, plan)
		}
	}
	plan := strings.Join(queryPlan(t, s, sqlLandingQueue, 100), "\n")
	require.Contains(t, plan, "missions_landing_queue", plan)
	require.NotContains(t, plan, "TEMP B-TREE", plan)
}

// MissionList returns what a filter over every mission would, page by page in id order,
// whichever filter drives the statement.
func TestMissionList_MatchesFilteringEveryMission(t *testing.T) {
	t.Parallel()
	s := openSeeded(t, 0)
	var all []domain.Mission
	states := []domain.MissionState{domain.StatePending, domain.StateCompleted, domain.StateFailed, domain.StateRunning}
	landings := []domain.LandingState{domain.LandingNone, domain.LandingPending, domain.LandingLanded}
	rawExec(t, s, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO voyages (id, title, repository, state, created_at, updated_at) VALUES ('vyg_1', 'v', '/r0', 'open', 0, 0)`); err != nil {
			return err
		}
		for i := 0; i < 60; i++ {
			m := domain.Mission{ID: fmt.Sprintf("m_%04d", i), Repository: fmt.Sprintf("/r%d", i%2), State: states[i%4],
				Landing: landings[i%3], Persona: []string{"", "reviewer", "p"}[i%3], Kind: []domain.MissionKind{domain.KindWork, domain.KindReview}[i%5/4]}
			if i%7 == 0 {
				m.VoyageID = "vyg_1"
			}
			if i%6 == 0 {
				m.ParentID = "m_0003"
			}
			if i%8 == 0 {
				m.SubjectID = "m_0004"
			}
			all = append(all, m)
			_, err := tx.Exec(`INSERT INTO missions (id, voyage_id, parent_id, subject_id, title, brief, repository, state, landing, persona, kind, created_at, updated_at)
 VALUES (?, ?, ?, ?, 't', 'b', ?, ?, ?, ?, ?, ?, ?)`, m.ID, nullStr(m.VoyageID), nullStr(m.ParentID), nullStr(m.SubjectID),
				m.Repository, m.State, m.Landing, m.Persona, m.Kind, i, i)
			if err != nil {
				return err
			}
		}
		return nil
	})
	for name, f := range listFilters() {
		want := []string{}
		for _, m := range all {
			if m.ID > f.Cursor && matches(f, m) {
				want = append(want, m.ID)
			}
		}
		got := []string{}
		f.Limit = 4
		for {
			var page []domain.Mission
			require.NoError(t, s.View(context.Background(), func(r engine.Reader) error {
				var err error
				page, err = r.MissionList(context.Background(), f)
				return err
			}))
			for _, m := range page {
				got = append(got, m.ID)
			}
			if len(page) < f.Limit {
				break
			}
			f.Cursor = page[len(page)-1].ID
		}
		require.True(t, sort.StringsAreSorted(got), name)
		require.Equal(t, want, got, name)
	}
}

func matches(f engine.MissionFilter, m domain.Mission) bool {
	if len(f.States) > 0 {
		ok := false
		for _, s := range f.States {
			ok = ok || s == m.State
		}
		if !ok {
			return false
		}
	}
	eq := func(want, have string) bool { return want == "" || want == have }
	return eq(f.VoyageID, m.VoyageID) && eq(f.Repository, m.Repository) && eq(f.Persona, m.Persona) &&
		eq(string(f.Kind), string(m.Kind)) && eq(f.ParentID, m.ParentID) && eq(f.SubjectID, m.SubjectID) &&
		eq(string(f.Landing), string(m.Landing))
}

// LeaseFences names exactly the leased and running missions, with their epochs.
func TestLeaseFences_LiveMissionsOnly(t *testing.T) {
	t.Parallel()
	s := openSeeded(t, 0)
	rawExec(t, s, func(tx *sql.Tx) error {
		for i, st := range []string{"pending", "leased", "running", "completed", "failed", "leased"} {
			if _, err := tx.Exec(`INSERT INTO missions (id, title, brief, repository, state, epoch, created_at, updated_at)
 VALUES (?, 't', 'b', '/r', ?, ?, 0, 0)`, fmt.Sprintf("m_%d", i), st, i+10); err != nil {
				return err
			}
		}
		return nil
	})
	var got []domain.Fence
	require.NoError(t, s.View(context.Background(), func(r engine.Reader) error {
		var err error
		got, err = r.LeaseFences(context.Background())
		return err
	}))
	sort.Slice(got, func(i, j int) bool { return got[i].MissionID < got[j].MissionID })
	require.Equal(t, []domain.Fence{{MissionID: "m_1", Epoch: 11}, {MissionID: "m_2", Epoch: 12}, {MissionID: "m_5", Epoch: 15}}, got)
}
