package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// missionCols is the column list every mission query returns, in scanMission's order.
const missionCols = `id, voyage_id, parent_id, idempotency_key, client_key, title, brief, repository, target_branch,
 priority, kind, subject_id, persona, capabilities, write_area, model_policy, workspace, review,
 acceptance, deadline, retry_budget, cost_limit_usd, state, attempt, attempts_used, epoch,
 lease_owner, lease_expires_at, profile, not_before, wait_reason, preempt, serial, checkpoint,
 progress, result, last_failure, last_signature, decision, landing, skipped, voyage_active,
 input_tokens, output_tokens, cost_usd, escalation_id, deadline_escalated, run, created_at,
 updated_at, started_at, finished_at, contacted, abandons, node`

type rowScanner interface{ Scan(dest ...any) error }

func scanMission(r rowScanner) (domain.Mission, error) {
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
		&updated, &started, &finished, &contacted, &m.Abandons, &m.Node)
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

// immutableCols never change after a mission is inserted (MissionSet has no field for them).
const immutableCols = `voyage_id, parent_id, idempotency_key, repository, subject_id`

func immutableArgs(m *domain.Mission) []any {
	return []any{nullStr(m.VoyageID), nullStr(m.ParentID), nullStr(m.IdempotencyKey), m.Repository, nullStr(m.SubjectID)}
}

// mutableArgs are the values of every column but id, created_at, immutableCols and
// voyage_active (a copy of the voyage's state the database keeps: migration 0007), in
// mutableSet's order.
func mutableArgs(m *domain.Mission) []any {
	return []any{m.Key, m.Title, m.Brief,
		m.TargetBranch, m.Priority, string(m.Kind), m.Persona,
		jsonText(orEmpty(m.Capabilities)), jsonOrNull(m.WriteArea), jsonText(m.ModelPolicy), m.Workspace, m.Review,
		jsonText(orEmpty(m.AcceptanceCriteria)), ms(m.Deadline), m.RetryBudget, m.CostLimitUSD, string(m.State),
		m.Attempt, m.AttemptsUsed, m.Lease.Epoch, nullStr(m.Lease.Owner), ms(m.Lease.ExpiresAt), m.Profile,
		ms0(m.NotBefore), m.WaitReason, boolInt(m.Preempt), boolInt(m.Serial), jsonOrNull(m.Checkpoint),
		jsonOrNull(m.Progress), jsonOrNull(m.Result), jsonOrNull(m.LastFailure), m.LastSignature,
		jsonOrNull(m.Decision), string(m.Landing), boolInt(m.Skipped),
		m.Usage.InputTokens, m.Usage.OutputTokens, m.Usage.CostUSD, nullStr(m.EscalationID),
		boolInt(m.DeadlineEscalated), jsonOrNull(m.Run), ms(m.UpdatedAt), ms(m.StartedAt), ms(m.FinishedAt),
		boolInt(m.Contacted), m.Abandons, m.Node}
}

const mutableCols = `client_key, title, brief, target_branch, priority, kind, persona, capabilities, write_area,
 model_policy, workspace, review, acceptance, deadline, retry_budget, cost_limit_usd, state, attempt,
 attempts_used, epoch, lease_owner, lease_expires_at, profile, not_before, wait_reason, preempt, serial,
 checkpoint, progress, result, last_failure, last_signature, decision, landing, skipped,
 input_tokens, output_tokens, cost_usd, escalation_id, deadline_escalated, run, updated_at, started_at,
 finished_at, contacted, abandons, node`

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

var (
	sqlMissionInsert = `INSERT INTO missions (` + immutableCols + `, ` + mutableCols + `, id, created_at)
 VALUES (` + strings.Repeat("?, ", 53) + `?)`
	sqlMissionGet   = `SELECT ` + missionCols + ` FROM missions WHERE id = ?`
	sqlMissionByKey = `SELECT ` + missionCols + ` FROM missions WHERE idempotency_key = ?`
	sqlMissionRenew = `UPDATE missions SET lease_expires_at = ?, contacted = contacted | ?
 WHERE id = ? AND epoch = ? AND state IN ('leased','running') RETURNING state, epoch, lease_expires_at, preempt`
	sqlMissionDelete   = `DELETE FROM missions WHERE id = ?`
	sqlMissionComplete = `UPDATE missions SET state = 'completed', landing = 'pending', result = ?,
 updated_at = ?, finished_at = ?, lease_expires_at = NULL, preempt = 0, abandons = 0
 WHERE id = ? AND state = 'running' AND epoch = ? AND landing = 'none' AND (? = 0 OR attempt = ?)
 RETURNING ` + missionCols
)

func (t *txn) MissionInsert(ctx context.Context, m *domain.Mission) error {
	args := append(append(immutableArgs(m), mutableArgs(m)...), m.ID, ms(m.CreatedAt))
	_, err := t.q.exec(ctx, sqlMissionInsert, args...)
	return translate(err, "insert mission "+m.ID)
}

func guarded(res sql.Result, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, domain.ErrGuard)
	}
	return nil
}

func (t *txn) MissionGet(ctx context.Context, id string) (domain.Mission, error) {
	m, err := scanMission(t.q.queryRow(ctx, sqlMissionGet, id))
	return m, translate(err, "mission "+id)
}

func (t *txn) MissionByIdempotencyKey(ctx context.Context, key string) (domain.Mission, error) {
	m, err := scanMission(t.q.queryRow(ctx, sqlMissionByKey, key))
	return m, translate(err, "mission with idempotency key "+key)
}

func (t *txn) MissionLease(ctx context.Context, id string) (engine.Renewed, error) {
	var r engine.Renewed
	var state string
	var exp sql.NullInt64
	var preempt int64
	err := t.q.queryRow(ctx, `SELECT state, epoch, lease_expires_at, preempt FROM missions WHERE id = ?`, id).
		Scan(&state, &r.Epoch, &exp, &preempt)
	r.State, r.ExpiresAt, r.Preempt = domain.MissionState(state), fromMS(exp), preempt == 1
	return r, translate(err, "lease of "+id)
}

func (t *txn) MissionRenew(ctx context.Context, f domain.Fence, expiresAt time.Time, contact bool) (engine.Renewed, error) {
	var r engine.Renewed
	var state string
	var exp sql.NullInt64
	var preempt int64
	err := t.q.queryRow(ctx, sqlMissionRenew, ms(expiresAt), boolInt(contact), f.MissionID, f.Epoch).Scan(&state, &r.Epoch, &exp, &preempt)
	if err == sql.ErrNoRows {
		return r, fmt.Errorf("renew lease of %s: %w", f.MissionID, domain.ErrGuard)
	}
	r.State, r.ExpiresAt, r.Preempt = domain.MissionState(state), fromMS(exp), preempt == 1
	return r, translate(err, "renew lease of "+f.MissionID)
}

func (t *txn) MissionDelete(ctx context.Context, id string) error {
	res, err := t.q.exec(ctx, sqlMissionDelete, id)
	if err != nil {
		return translate(err, "delete mission "+id)
	}
	n, _ := res.RowsAffected()
	if n == 0 {
		return fmt.Errorf("delete mission %s: %w", id, domain.ErrNotFound)
	}
	return nil
}

func (t *txn) queryMissions(ctx context.Context, what, q string, args ...any) ([]domain.Mission, error) {
	rows, err := t.q.query(ctx, q, args...)
	if err != nil {
		return nil, translate(err, what)
	}
	defer rows.Close()
	var out []domain.Mission
	for rows.Next() {
		m, err := scanMission(rows)
		if err != nil {
			return nil, translate(err, what)
		}
		out = append(out, m)
	}
	return out, translate(rows.Err(), what)
}

// MissionComplete completes a running attempt in one guarded statement (engine.Tx).
func (t *txn) MissionComplete(ctx context.Context, p engine.CompleteParams) (domain.Mission, error) {
	at := ms(p.Now)
	m, err := scanMission(t.q.queryRow(ctx, sqlMissionComplete, jsonOrNull(p.Result), at, at,
		p.Fence.MissionID, p.Fence.Epoch, p.Attempt, p.Attempt))
	if err == sql.ErrNoRows {
		return m, fmt.Errorf("complete mission %s: %w", p.Fence.MissionID, domain.ErrGuard)
	}
	return m, translate(err, "complete mission "+p.Fence.MissionID)
}
