package storage

import (
	"context"
	"database/sql"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// MissionList pages through missions by id (creation order) with optional filters. The
// statement is built from the filters actually set, and one of them drives it through its
// (column, id) index in id order, so a page costs its LIMIT plus the rows of the driving
// index that the other filters reject, never a walk of the whole table (see listDriver for
// which filter drives). Several states are one branch per state, each walking
// missions_state_id from the cursor, merged by id.
func (t *txn) MissionList(ctx context.Context, f engine.MissionFilter) ([]domain.Mission, error) {
	q, args := missionListQuery(f)
	return t.queryMissions(ctx, "list missions", q, args...)
}

// listLimit is the page size MissionList uses for f: f.Limit within 1..1000, else 100.
func listLimit(f engine.MissionFilter) int {
	if f.Limit <= 0 || f.Limit > 1000 {
		return 100
	}
	return f.Limit
}

// listTerm is one equality filter of a listing: its column, value and the index that serves
// it in id order.
type listTerm struct {
	col, index, value string
}

// listTerms returns f's equality filters other than state, in the order in which they are
// preferred to drive the statement: the ones that name a small group first (a subject's
// reviews, a parent's children, a voyage's missions), then a landing state other than the
// common none, then the broad ones.
func listTerms(f engine.MissionFilter) []listTerm {
	all := []listTerm{
		{"subject_id", "missions_subject", f.SubjectID},
		{"parent_id", "missions_parent", f.ParentID},
		{"voyage_id", "missions_voyage_id", f.VoyageID},
		{"landing", "missions_landing_id", string(f.Landing)},
		{"repository", "missions_repository_id", f.Repository},
		{"persona", "missions_persona_id", f.Persona},
		{"kind", "missions_kind_id", string(f.Kind)},
	}
	var out []listTerm
	for _, t := range all {
		if t.value != "" {
			out = append(out, t)
		}
	}
	return out
}

// listDriver chooses the index that drives a listing: the first of terms (see listTerms),
// except that a state filter drives instead of a landing state of none or of a broad filter
// (repository, persona, kind); "" when nothing is filtered (the primary key walks from the
// cursor).
func listDriver(terms []listTerm, states bool) string {
	if len(terms) > 0 {
		switch d := terms[0]; {
		case d.col == "subject_id" || d.col == "parent_id" || d.col == "voyage_id":
			return d.index
		case d.col == "landing" && d.value != string(domain.LandingNone):
			return d.index
		case !states:
			return d.index
		}
	}
	if states {
		return "missions_state_id"
	}
	return ""
}

// missionListQuery builds MissionList's statement and arguments.
func missionListQuery(f engine.MissionFilter) (string, []any) {
	limit := listLimit(f)
	terms := listTerms(f)
	driver := listDriver(terms, len(f.States) > 0)
	var where []string
	args := []any{sql.Named("cursor", f.Cursor), sql.Named("limit", limit)}
	for _, t := range terms {
		where = append(where, t.col+" = @"+t.col)
		args = append(args, sql.Named(t.col, t.value))
	}
	from := "missions"
	if driver != "" {
		from += " INDEXED BY " + driver
	}
	branch := func(state string) string {
		w := append([]string{"id > @cursor"}, where...)
		if state != "" {
			w = append(w, "state = "+state)
		}
		return `SELECT ` + missionCols + ` FROM ` + from + ` WHERE ` + strings.Join(w, " AND ") + ` ORDER BY id LIMIT @limit`
	}
	if len(f.States) == 0 {
		return branch(""), args
	}
	states := uniqueStates(f.States)
	if len(states) == 1 {
		return branch("@state0"), append(args, sql.Named("state0", string(states[0])))
	}
	parts := make([]string, len(states))
	for i, s := range states {
		name := "state" + string(rune('a'+i))
		parts[i] = `SELECT * FROM (` + branch("@"+name) + `)`
		args = append(args, sql.Named(name, string(s)))
	}
	return strings.Join(parts, " UNION ALL ") + ` ORDER BY id LIMIT @limit`, args
}

// uniqueStates drops repeated states, keeping the first occurrence's order.
func uniqueStates(in []domain.MissionState) []domain.MissionState {
	seen := map[domain.MissionState]bool{}
	var out []domain.MissionState
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// sqlLandingQueue is the landing queue (completed missions whose landing can go on) in
// creation order, through the partial index missions_landing_queue: its cost is the queue's
// length, not the number of missions ever completed.
var sqlLandingQueue = `SELECT ` + missionCols + ` FROM missions INDEXED BY missions_landing_queue
 WHERE state = 'completed' AND landing IN ('pending','approved','review','waiting') ORDER BY id LIMIT ?`

func (t *txn) MissionsLandingQueue(ctx context.Context, limit int) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "landing queue", sqlLandingQueue, limit)
}

// sqlLandingAwaiting is the landings waiting for approval or a repair in creation order,
// through the partial index missions_landing_awaiting (migration 0009).
var sqlLandingAwaiting = `SELECT ` + missionCols + ` FROM missions INDEXED BY missions_landing_awaiting
 WHERE state = 'completed' AND landing IN ('approval','repair') ORDER BY id LIMIT ?`

func (t *txn) MissionsLandingAwaiting(ctx context.Context, limit int) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "landings awaiting approval or a repair", sqlLandingAwaiting, limit)
}
