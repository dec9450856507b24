package postgres

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// listFilters is every list_missions filter alone, with a cursor, with one and with two
// states, and a few combinations, as the SQLite backend's list test has them.
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

// TestMissionList_MatchesFilteringEveryMission: MissionList returns what a filter over every
// mission would, page by page in id order, for every filter and combination (whichever index
// PostgreSQL's planner drives the statement with).
func TestMissionList_MatchesFilteringEveryMission(t *testing.T) {
	ctx := testCtx(t)
	pool := migratedPool(t, ctx)
	execAll(t, ctx, pool, `INSERT INTO voyages (id, title, repository, state, created_at, updated_at) VALUES ('vyg_1', 'v', '/r0', 'open', 0, 0)`)
	states := []domain.MissionState{domain.StatePending, domain.StateCompleted, domain.StateFailed, domain.StateRunning}
	landings := []domain.LandingState{domain.LandingNone, domain.LandingPending, domain.LandingLanded}
	var all []domain.Mission
	for i := range 60 {
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
		_, err := pool.Exec(ctx, `INSERT INTO missions (id, voyage_id, parent_id, subject_id, title, brief, repository, state, landing, persona, kind, created_at, updated_at)
 VALUES ($1, $2, $3, $4, 't', 'b', $5, $6, $7, $8, $9, $10, $10)`, m.ID, nullStr(m.VoyageID), nullStr(m.ParentID), nullStr(m.SubjectID),
			m.Repository, string(m.State), string(m.Landing), m.Persona, string(m.Kind), int64(i))
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, f := range listFilters() {
		want := []string{}
		for _, m := range all {
			if m.ID > f.Cursor && listMatches(f, m) {
				want = append(want, m.ID)
			}
		}
		got := []string{}
		f.Limit = 4
		for {
			var page []domain.Mission
			inTxn(t, ctx, pool, func(tx *txn) error {
				var err error
				page, err = tx.MissionList(ctx, f)
				return err
			})
			for _, m := range page {
				got = append(got, m.ID)
			}
			if len(page) < f.Limit {
				break
			}
			f.Cursor = page[len(page)-1].ID
		}
		if !slices.Equal(want, got) {
			t.Errorf("%s: listed %v, want %v", name, got, want)
		}
	}
}

// listMatches reports whether m passes every filter of f (the cursor aside).
func listMatches(f engine.MissionFilter, m domain.Mission) bool {
	if len(f.States) > 0 && !slices.Contains(f.States, m.State) {
		return false
	}
	eq := func(want, have string) bool { return want == "" || want == have }
	return eq(f.VoyageID, m.VoyageID) && eq(f.Repository, m.Repository) && eq(f.Persona, m.Persona) &&
		eq(string(f.Kind), string(m.Kind)) && eq(f.ParentID, m.ParentID) && eq(f.SubjectID, m.SubjectID) &&
		eq(string(f.Landing), string(m.Landing))
}
