package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// missionCols is the column list every mission query returns, in scanMission's order (the
// SQLite backend's, storage/missions.go).
const missionCols = `id, voyage_id, parent_id, idempotency_key, client_key, title, brief, repository, target_branch,
 priority, kind, subject_id, persona, capabilities, write_area, model_policy, workspace, review,
 acceptance, deadline, retry_budget, cost_limit_usd, state, attempt, attempts_used, epoch,
 lease_owner, lease_expires_at, profile, not_before, wait_reason, preempt, serial, checkpoint,
 progress, result, last_failure, last_signature, decision, landing, skipped, voyage_active,
 input_tokens, output_tokens, cost_usd, escalation_id, deadline_escalated, run, created_at,
 updated_at, started_at, finished_at, contacted, abandons, node`

// scanMission reads one row of missionCols into a mission.
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
// voyage_active (a copy of the voyage's state the database keeps by trigger), in
// mutableCols' order.
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

// orEmpty makes a nil list an empty one, for NOT NULL JSON list columns.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// placeholders returns "$from, $from+1, … $to": the parameters of a statement's VALUES.
func placeholders(from, to int) string {
	ps := make([]string, 0, to-from+1)
	for i := from; i <= to; i++ {
		ps = append(ps, fmt.Sprintf("$%d", i))
	}
	return strings.Join(ps, ", ")
}

var (
	// ON CONFLICT DO NOTHING: a duplicate id or idempotency key must not abort the
	// transaction (PostgreSQL aborts it on a failed statement, SQLite does not), so the
	// duplicate is told by no row inserted (MissionInsert).
	sqlMissionInsert = `INSERT INTO missions (` + immutableCols + `, ` + mutableCols + `, id, created_at)
 VALUES (` + placeholders(1, 54) + `) ON CONFLICT DO NOTHING`
	sqlMissionGet      = `SELECT ` + missionCols + ` FROM missions WHERE id = $1`
	sqlMissionByKey    = `SELECT ` + missionCols + ` FROM missions WHERE idempotency_key = $1`
	sqlMissionComplete = `UPDATE missions SET state = 'completed', landing = 'pending', result = $1,
 updated_at = $2, finished_at = $2, lease_expires_at = NULL, preempt = 0, abandons = 0
 WHERE id = $3 AND state = 'running' AND epoch = $4 AND landing = 'none' AND ($5 = 0 OR attempt = $5)
 RETURNING ` + missionCols
	sqlMissionLease = `SELECT state, epoch, lease_expires_at, preempt FROM missions WHERE id = $1`
	sqlMissionRenew = `UPDATE missions SET lease_expires_at = $1, contacted = contacted | $2
 WHERE id = $3 AND epoch = $4 AND state IN ('leased','running') RETURNING state, epoch, lease_expires_at, preempt`
	sqlMissionDelete = `DELETE FROM missions WHERE id = $1`
)

// MissionInsert stores m (engine.Tx). A mission with m's id or idempotency key is
// ErrDuplicateID, naming which, and leaves the transaction usable; a voyage that does not
// exist is ErrUnknownMission.
func (t *txn) MissionInsert(ctx context.Context, m *domain.Mission) error {
	what := "insert mission " + m.ID
	args := append(append(immutableArgs(m), mutableArgs(m)...), m.ID, ms(m.CreatedAt))
	tag, err := t.q.Exec(ctx, sqlMissionInsert, args...)
	if err != nil {
		return translate(err, what)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var sameID bool
	err = t.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM missions WHERE id = $1)`, m.ID).Scan(&sameID)
	if err != nil {
		return translate(err, what)
	}
	if sameID {
		return fmt.Errorf("%s: %w: missions_pkey (the id exists)", what, domain.ErrDuplicateID)
	}
	return fmt.Errorf("%s: %w: missions_idempotency_key_key (idempotency key %q is taken)", what, domain.ErrDuplicateID, m.IdempotencyKey)
}

// MissionGet reads one mission; ErrNotFound when there is none.
func (t *txn) MissionGet(ctx context.Context, id string) (domain.Mission, error) {
	m, err := scanMission(t.q.QueryRow(ctx, sqlMissionGet, id))
	return m, translate(err, "mission "+id)
}

// MissionByIdempotencyKey reads the mission created with key; ErrNotFound when there is none.
func (t *txn) MissionByIdempotencyKey(ctx context.Context, key string) (domain.Mission, error) {
	m, err := scanMission(t.q.QueryRow(ctx, sqlMissionByKey, key))
	return m, translate(err, "mission with idempotency key "+key)
}

// MissionLease reads only a mission's lease (the heartbeat's read path); ErrNotFound when the
// mission is gone.
func (t *txn) MissionLease(ctx context.Context, id string) (engine.Renewed, error) {
	r, err := scanRenewed(t.q.QueryRow(ctx, sqlMissionLease, id))
	return r, translate(err, "lease of "+id)
}

// MissionRenew extends the live lease f to expiresAt, recording contact when asked (it stays
// set for the attempt); ErrGuard when the mission is not leased or running at f's epoch.
func (t *txn) MissionRenew(ctx context.Context, f domain.Fence, expiresAt time.Time, contact bool) (engine.Renewed, error) {
	r, err := scanRenewed(t.q.QueryRow(ctx, sqlMissionRenew, ms(expiresAt), boolInt(contact), f.MissionID, f.Epoch))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, fmt.Errorf("renew lease of %s: %w", f.MissionID, domain.ErrGuard)
	}
	return r, translate(err, "renew lease of "+f.MissionID)
}

// scanRenewed reads (state, epoch, lease_expires_at, preempt) into a Renewed.
func scanRenewed(row rowScanner) (engine.Renewed, error) {
	var r engine.Renewed
	var state string
	var exp sql.NullInt64
	var preempt int64
	err := row.Scan(&state, &r.Epoch, &exp, &preempt)
	r.State, r.ExpiresAt, r.Preempt = domain.MissionState(state), fromMS(exp), preempt == 1
	return r, err
}

// MissionDelete removes a mission; its edges, write areas and hold go with it (ON DELETE
// CASCADE). ErrNotFound when it is gone.
func (t *txn) MissionDelete(ctx context.Context, id string) error {
	tag, err := t.q.Exec(ctx, sqlMissionDelete, id)
	if err != nil {
		return translate(err, "delete mission "+id)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete mission %s: %w", id, domain.ErrNotFound)
	}
	return nil
}

// queryMissions runs q (selecting missionCols) and scans every row; what names the query in
// errors.
func (t *txn) queryMissions(ctx context.Context, what, q string, args ...any) ([]domain.Mission, error) {
	rows, err := t.q.Query(ctx, q, args...)
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

// MissionComplete completes a running attempt in one guarded statement (engine.Tx). A guard
// miss matches no row, which is ErrGuard and no failed statement: the transaction stays usable.
func (t *txn) MissionComplete(ctx context.Context, p engine.CompleteParams) (domain.Mission, error) {
	m, err := scanMission(t.q.QueryRow(ctx, sqlMissionComplete, jsonOrNull(p.Result), ms(p.Now),
		p.Fence.MissionID, p.Fence.Epoch, p.Attempt))
	if errors.Is(err, pgx.ErrNoRows) {
		return m, fmt.Errorf("complete mission %s: %w", p.Fence.MissionID, domain.ErrGuard)
	}
	return m, translate(err, "complete mission "+p.Fence.MissionID)
}
