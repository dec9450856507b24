package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// MissionList pages through missions by id (creation order) with optional filters. The
// statement is built from the filters actually set; the schema has the SQLite backend's
// (column, id) indexes, and PostgreSQL's planner (it has no INDEXED BY) picks the one that
// drives the page in id order from its statistics, so a page costs its LIMIT plus the rows
// the other filters reject. Several states are one parenthesised branch per state, each
// walking missions_state_id from the cursor, merged by id.
func (t *txn) MissionList(ctx context.Context, f engine.MissionFilter) ([]domain.Mission, error) {
	q, args := missionListQuery(f)
	return t.queryMissions(ctx, "list missions", q, args)
}

// listLimit is the page size MissionList uses for f: f.Limit within 1..1000, else 100.
func listLimit(f engine.MissionFilter) int {
	if f.Limit <= 0 || f.Limit > 1000 {
		return 100
	}
	return f.Limit
}

// listTerm is one equality filter of a listing: its column and value.
type listTerm struct {
	col, value string
}

// listTerms returns f's equality filters other than state that are set.
func listTerms(f engine.MissionFilter) []listTerm {
	all := []listTerm{
		{"subject_id", f.SubjectID},
		{"parent_id", f.ParentID},
		{"voyage_id", f.VoyageID},
		{"landing", string(f.Landing)},
		{"repository", f.Repository},
		{"persona", f.Persona},
		{"kind", string(f.Kind)},
	}
	var out []listTerm
	for _, t := range all {
		if t.value != "" {
			out = append(out, t)
		}
	}
	return out
}

// missionListQuery builds MissionList's statement and its named arguments (pgx.NamedArgs:
// @name placeholders, each typed by the column it is compared with).
func missionListQuery(f engine.MissionFilter) (string, pgx.NamedArgs) {
	args := pgx.NamedArgs{"cursor": f.Cursor, "limit": listLimit(f)}
	where := []string{"id > @cursor"}
	for _, t := range listTerms(f) {
		where = append(where, t.col+" = @"+t.col)
		args[t.col] = t.value
	}
	branch := func(state string) string {
		w := where
		if state != "" {
			w = append(w[:len(w):len(w)], "state = "+state)
		}
		return `SELECT ` + missionCols + ` FROM missions WHERE ` + strings.Join(w, " AND ") + ` ORDER BY id LIMIT @limit`
	}
	if len(f.States) == 0 {
		return branch(""), args
	}
	states := uniqueStates(f.States)
	if len(states) == 1 {
		args["state0"] = string(states[0])
		return branch("@state0"), args
	}
	parts := make([]string, len(states))
	for i, s := range states {
		name := "state" + string(rune('a'+i))
		parts[i] = `(` + branch("@"+name) + `)`
		args[name] = string(s)
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
// creation order. Its WHERE is the partial index missions_landing_queue's, literally, so that
// PostgreSQL can prove the index applies (also to a cached generic plan): the cost is the
// queue's length, not the number of missions ever completed.
var sqlLandingQueue = `SELECT ` + missionCols + ` FROM missions
 WHERE state = 'completed' AND landing IN ('pending','approved','review','waiting') ORDER BY id LIMIT $1`

// MissionsLandingQueue returns the landing queue in creation order, at most limit.
func (t *txn) MissionsLandingQueue(ctx context.Context, limit int) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "landing queue", sqlLandingQueue, limit)
}

// sqlLandingAwaiting is the landings waiting for approval or a repair in creation order,
// through the partial index missions_landing_awaiting (its WHERE, literally).
var sqlLandingAwaiting = `SELECT ` + missionCols + ` FROM missions
 WHERE state = 'completed' AND landing IN ('approval','repair') ORDER BY id LIMIT $1`

// MissionsLandingAwaiting returns the landings waiting for approval or a repair in creation
// order, at most limit.
func (t *txn) MissionsLandingAwaiting(ctx context.Context, limit int) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "landings awaiting approval or a repair", sqlLandingAwaiting, limit)
}
