package storage

import (
	"context"
	"database/sql"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

const escalationCols = `id, mission_ids, voyage_id, route, kind, cause_id, reason, decision_required, evidence,
 safe_next_step, state, resolution, resolved_by, created_at, resolved_at, once_key`

func escalationArgs(e *domain.Escalation) []any {
	return []any{jsonText(orEmpty(e.MissionIDs)), nullStr(e.VoyageID), string(e.Route), e.Kind, nullStr(e.CauseID), e.Reason,
		e.DecisionRequired, jsonText(orEmpty(e.Evidence)), e.SafeNextStep, e.State, e.Resolution, e.ResolvedBy,
		ms(e.CreatedAt), ms(e.ResolvedAt), nullStr(e.OnceKey)}
}

func (t *txn) EscalationInsert(ctx context.Context, e *domain.Escalation) error {
	args := append([]any{e.ID}, escalationArgs(e)...)
	_, err := t.q.exec(ctx, `INSERT INTO escalations (`+escalationCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	return translate(err, "insert escalation "+e.ID)
}

func (t *txn) EscalationUpdate(ctx context.Context, e *domain.Escalation) error {
	args := append(escalationArgs(e), e.ID)
	res, err := t.q.exec(ctx, `UPDATE escalations SET mission_ids=?, voyage_id=?, route=?, kind=?, cause_id=?, reason=?,
 decision_required=?, evidence=?, safe_next_step=?, state=?, resolution=?, resolved_by=?, created_at=?,
 resolved_at=?, once_key=? WHERE id = ?`, args...)
	if err != nil {
		return translate(err, "update escalation "+e.ID)
	}
	return guarded(res, "update escalation "+e.ID)
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

func (t *txn) EscalationGet(ctx context.Context, id string) (domain.Escalation, error) {
	e, err := scanEscalation(t.q.queryRow(ctx, `SELECT `+escalationCols+` FROM escalations WHERE id = ?`, id))
	return e, translate(err, "escalation "+id)
}

func (t *txn) EscalationList(ctx context.Context, f engine.EscalationFilter) ([]domain.Escalation, error) {
	limit := f.Limit
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	rows, err := t.q.query(ctx, escalationListQuery(f), sql.Named("state", f.State), sql.Named("voyage", f.VoyageID),
		sql.Named("route", string(f.Route)), sql.Named("cause", f.CauseID), sql.Named("mission", f.MissionID), sql.Named("once", f.OnceKey), sql.Named("limit", limit))
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

func (t *txn) EscalationCount(ctx context.Context, state string) (int, error) {
	var n int
	err := t.q.queryRow(ctx, `SELECT count(*) FROM escalations WHERE state = ?`, state).Scan(&n)
	return n, translate(err, "count escalations")
}

// escalationListQuery builds EscalationList's statement from the filters set, so that a
// cause, a voyage, a once key or a state is searched through its index (escalations_cause,
// escalations_voyage, escalations_once with state open, escalations_state) instead of every escalation ever raised being
// tested. A mission filter alone (no state, voyage or cause) still tests each escalation's
// mission list: no tick runs it.
func escalationListQuery(f engine.EscalationFilter) string {
	var where []string
	add := func(set bool, term string) {
		if set {
			where = append(where, term)
		}
	}
	// open inlined: the partial index escalations_once (open rows only) serves a literal
	add(f.State == domain.EscalationOpen, "state = 'open'")
	add(f.State != "" && f.State != domain.EscalationOpen, "state = @state")
	add(f.VoyageID != "", "voyage_id = @voyage")
	add(f.Route != "", "route = @route")
	add(f.CauseID != "", "cause_id = @cause")
	add(f.OnceKey != "", "once_key = @once")
	add(f.MissionID != "", "EXISTS (SELECT 1 FROM json_each(mission_ids) WHERE value = @mission)")
	q := `SELECT ` + escalationCols + ` FROM escalations`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	return q + ` ORDER BY created_at, id LIMIT @limit`
}
