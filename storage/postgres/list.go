package postgres

import (
	"context"
	"database/sql"
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
	return t.listQueryMissions(ctx, "list missions", q, args)
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
		return `SELECT ` + listMissionCols + ` FROM missions WHERE ` + strings.Join(w, " AND ") + ` ORDER BY id LIMIT @limit`
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
var sqlLandingQueue = `SELECT ` + listMissionCols + ` FROM missions
 WHERE state = 'completed' AND landing IN ('pending','approved','review','waiting') ORDER BY id LIMIT $1`

// MissionsLandingQueue returns the landing queue in creation order, at most limit.
func (t *txn) MissionsLandingQueue(ctx context.Context, limit int) ([]domain.Mission, error) {
	return t.listQueryMissions(ctx, "landing queue", sqlLandingQueue, limit)
}

// sqlLandingAwaiting is the landings waiting for approval or a repair in creation order,
// through the partial index missions_landing_awaiting (its WHERE, literally).
var sqlLandingAwaiting = `SELECT ` + listMissionCols + ` FROM missions
 WHERE state = 'completed' AND landing IN ('approval','repair') ORDER BY id LIMIT $1`

// MissionsLandingAwaiting returns the landings waiting for approval or a repair in creation
// order, at most limit.
func (t *txn) MissionsLandingAwaiting(ctx context.Context, limit int) ([]domain.Mission, error) {
	return t.listQueryMissions(ctx, "landings awaiting approval or a repair", sqlLandingAwaiting, limit)
}

// listMissionCols is the column list the listings return, in listScanMission's order. It and
// listScanMission are the SQLite backend's missionCols and scanMission (storage/missions.go),
// copied here under this file's prefix because missions.go is ported by another group: on
// merge, fold them into missions.go's.
const listMissionCols = `id, voyage_id, parent_id, idempotency_key, client_key, title, brief, repository, target_branch,
 priority, kind, subject_id, persona, capabilities, write_area, model_policy, workspace, review,
 acceptance, deadline, retry_budget, cost_limit_usd, state, attempt, attempts_used, epoch,
 lease_owner, lease_expires_at, profile, not_before, wait_reason, preempt, serial, checkpoint,
 progress, result, last_failure, last_signature, decision, landing, skipped, voyage_active,
 input_tokens, output_tokens, cost_usd, escalation_id, deadline_escalated, run, created_at,
 updated_at, started_at, finished_at, contacted, abandons`

// listQueryMissions runs a query returning listMissionCols and scans every row; what names
// the listing in errors.
func (t *txn) listQueryMissions(ctx context.Context, what, q string, args ...any) ([]domain.Mission, error) {
	rows, err := t.q.Query(ctx, q, args...)
	if err != nil {
		return nil, translate(err, what)
	}
	defer rows.Close()
	var out []domain.Mission
	for rows.Next() {
		m, err := listScanMission(rows)
		if err != nil {
			return nil, translate(err, what)
		}
		out = append(out, m)
	}
	return out, translate(rows.Err(), what)
}

// listScanMission reads one row of listMissionCols into a mission.
func listScanMission(r rowScanner) (domain.Mission, error) {
	var m domain.Mission
	var voyage, parent, idem, subject, writeArea, owner, checkpoint, progress, result, failure,
		decision, escalation, run sql.NullString
	var caps, policy, acceptance, state, kind, landing string
	var deadline, expires, notBefore, created, updated, started, finished sql.NullInt64
	var preempt, serial, skipped, active, deadlineEsc, contacted int64
	err := r.Scan(&m.ID, &voyage, &parent, &idem, &m.Key, &m.Title, &m.Brief, &m.Repository, &m.TargetBranch,
		&m.Priority, &kind, &subject, &m.Persona, &caps, &writeArea, &policy, &m.Workspace, &m.Review,
		&acceptance, &deadline, &m.RetryBudget, &m.CostLimitUSD, &state, &m.Attempt, &m.AttemptsUsed, &m.Lease.Epoch,
		&owner, &expires, &m.Profile, &notBefore, &m.WaitReason, &preempt, &serial, &checkpoint,
		&progress, &result, &failure, &m.LastSignature, &decision, &landing, &skipped, &active,
		&m.Usage.InputTokens, &m.Usage.OutputTokens, &m.Usage.CostUSD, &escalation, &deadlineEsc, &run, &created,
		&updated, &started, &finished, &contacted, &m.Abandons)
	if err != nil {
		return m, err
	}
	m.VoyageID, m.ParentID, m.IdempotencyKey, m.SubjectID = voyage.String, parent.String, idem.String, subject.String
	m.Kind, m.State, m.Landing = domain.MissionKind(kind), domain.MissionState(state), domain.LandingState(landing)
	m.Capabilities, m.WriteArea, m.AcceptanceCriteria = strList(caps), nullList(writeArea), strList(acceptance)
	if p := decodeInto[domain.ModelPolicy](sql.NullString{String: policy, Valid: true}); p != nil {
		m.ModelPolicy = *p
	}
	m.Deadline, m.NotBefore = fromMS(deadline), fromMS(notBefore)
	m.Lease.Owner, m.Lease.ExpiresAt = owner.String, fromMS(expires)
	m.Preempt, m.Serial, m.Skipped, m.VoyageActive, m.DeadlineEscalated = preempt == 1, serial == 1, skipped == 1, active > 0, deadlineEsc == 1
	m.Checkpoint, m.Run = rawJSON(checkpoint), rawJSON(run)
	m.Progress = decodeInto[domain.Progress](progress)
	m.Result = decodeInto[domain.WorkerResult](result)
	m.LastFailure = decodeInto[domain.Failure](failure)
	m.Decision = decodeInto[domain.Decision](decision)
	m.EscalationID = escalation.String
	m.Contacted = contacted == 1
	m.CreatedAt, m.UpdatedAt, m.StartedAt, m.FinishedAt = fromMS(created), fromMS(updated), fromMS(started), fromMS(finished)
	return m, nil
}
