package postgres

import (
	"context"
	"database/sql"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Escalations, as the SQLite backend keeps them (storage/escalations.go).

const escalationCols = `id, mission_ids, voyage_id, route, kind, cause_id, reason, decision_required, evidence,
 safe_next_step, state, resolution, resolved_by, created_at, resolved_at, once_key`

func escalationArgs(e *domain.Escalation) []any {
	return []any{jsonText(recordsOrEmpty(e.MissionIDs)), nullStr(e.VoyageID), string(e.Route), e.Kind, nullStr(e.CauseID),
		e.Reason, e.DecisionRequired, jsonText(recordsOrEmpty(e.Evidence)), e.SafeNextStep, e.State, e.Resolution,
		e.ResolvedBy, ms(e.CreatedAt), ms(e.ResolvedAt), nullStr(e.OnceKey)}
}

// EscalationInsert stores a new escalation. A taken id, or a once key that an open
// escalation already has (escalations_once), is ErrDuplicateID; the insert is ON CONFLICT DO
// NOTHING (covering both unique indexes) and the duplicate is told from the row count, so
// that the transaction stays usable: EscalateOnce goes on after a duplicate.
func (t *txn) EscalationInsert(ctx context.Context, e *domain.Escalation) error {
	args := append([]any{e.ID}, escalationArgs(e)...)
	tag, err := t.q.Exec(ctx, `INSERT INTO escalations (`+escalationCols+`)
 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING`, args...)
	if err != nil {
		return translate(err, "insert escalation "+e.ID)
	}
	return recordsInserted(tag.RowsAffected(), "insert escalation "+e.ID, "an escalation with this id or an open one with this once key")
}

// EscalationUpdate rewrites a stored escalation (ErrGuard when it is gone).
func (t *txn) EscalationUpdate(ctx context.Context, e *domain.Escalation) error {
	args := append(escalationArgs(e), e.ID)
	tag, err := t.q.Exec(ctx, `UPDATE escalations SET mission_ids=$1, voyage_id=$2, route=$3, kind=$4, cause_id=$5,
 reason=$6, decision_required=$7, evidence=$8, safe_next_step=$9, state=$10, resolution=$11, resolved_by=$12,
 created_at=$13, resolved_at=$14, once_key=$15 WHERE id = $16`, args...)
	if err != nil {
		return translate(err, "update escalation "+e.ID)
	}
	return guarded(tag, "update escalation "+e.ID)
}

func scanEscalation(r rowScanner) (domain.Escalation, error) {
	var e domain.Escalation
	var missions, evidence, route string
	var voyage, cause, once sql.NullString
	var created, resolved sql.NullInt64
	err := r.Scan(&e.ID, &missions, &voyage, &route, &e.Kind, &cause, &e.Reason, &e.DecisionRequired, &evidence,
		&e.SafeNextStep, &e.State, &e.Resolution, &e.ResolvedBy, &created, &resolved, &once)
	e.MissionIDs, e.Evidence, e.VoyageID, e.Route = strList(missions), strList(evidence), voyage.String, domain.Route(route)
	e.CauseID, e.OnceKey = cause.String, once.String
	e.CreatedAt, e.ResolvedAt = fromMS(created), fromMS(resolved)
	return e, err
}

// EscalationGet returns an escalation (ErrNotFound when none).
func (t *txn) EscalationGet(ctx context.Context, id string) (domain.Escalation, error) {
	e, err := scanEscalation(t.q.QueryRow(ctx, `SELECT `+escalationCols+` FROM escalations WHERE id = $1`, id))
	return e, translate(err, "escalation "+id)
}

// EscalationList returns the escalations matching f, oldest first, at most f.Limit (≤ 0 or
// over 1000: 100).
func (t *txn) EscalationList(ctx context.Context, f engine.EscalationFilter) ([]domain.Escalation, error) {
	limit := f.Limit
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	rows, err := t.q.Query(ctx, escalationListQuery(f), pgx.NamedArgs{"state": f.State, "voyage": f.VoyageID,
		"route": string(f.Route), "cause": f.CauseID, "mission": f.MissionID, "once": f.OnceKey, "limit": limit})
	if err != nil {
		return nil, translate(err, "list escalations")
	}
	defer rows.Close()
	var out []domain.Escalation
	for rows.Next() {
		e, err := scanEscalation(rows)
		if err != nil {
			return nil, translate(err, "list escalations")
		}
		out = append(out, e)
	}
	return out, translate(rows.Err(), "list escalations")
}

// EscalationCount returns how many escalations are in state.
func (t *txn) EscalationCount(ctx context.Context, state string) (int, error) {
	var n int
	err := t.q.QueryRow(ctx, `SELECT count(*) FROM escalations WHERE state = $1`, state).Scan(&n)
	return n, translate(err, "count escalations")
}

// escalationListQuery builds EscalationList's statement from the filters set, so that a
// cause, a voyage, a once key or a state is searched through its index (escalations_cause,
// escalations_voyage, escalations_once with state open, escalations_state) instead of every
// escalation ever raised being tested. A mission filter alone still tests each escalation's
// mission list (a JSON array): no tick runs it. Its named arguments are EscalationList's
// pgx.NamedArgs.
func escalationListQuery(f engine.EscalationFilter) string {
	var where []string
	add := func(set bool, term string) {
		if set {
			where = append(where, term)
		}
	}
	// open inlined: the partial index escalations_once (open rows only) serves a literal
	add(f.State == domain.EscalationOpen, "state = 'open'")
	add(f.State != "" && f.State != domain.EscalationOpen, "state = @state::text")
	add(f.VoyageID != "", "voyage_id = @voyage::text")
	add(f.Route != "", "route = @route::text")
	add(f.CauseID != "", "cause_id = @cause::text")
	add(f.OnceKey != "", "once_key = @once::text")
	add(f.MissionID != "", "EXISTS (SELECT 1 FROM json_array_elements_text(mission_ids::json) AS m(id) WHERE m.id = @mission::text)")
	q := `SELECT ` + escalationCols + ` FROM escalations`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	return q + ` ORDER BY created_at, id LIMIT @limit::bigint`
}
