package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Attempts, landings, agents, waves, the pause flag and the leader lease, as the SQLite
// backend keeps them (storage/records.go).

// AttemptInsert records one attempt of a mission. A second attempt with the same (mission,
// attempt, epoch) is ErrDuplicateID; the insert is ON CONFLICT DO NOTHING and the duplicate
// is told from the row count, so that the transaction stays usable (in PostgreSQL a failed
// statement aborts the whole transaction).
func (t *txn) AttemptInsert(ctx context.Context, a *domain.Attempt) error {
	what := "record attempt of " + a.MissionID
	tag, err := t.q.Exec(ctx, `INSERT INTO attempts (mission_id, attempt, epoch, agent, profile, persona, outcome,
 failure, signature, weight, input_tokens, output_tokens, cost_usd, summary, started_at, ended_at)
 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING`,
		a.MissionID, a.Attempt, a.Epoch, a.Agent, a.Profile, a.Persona, a.Outcome, jsonOrNull(a.Failure), a.Signature,
		a.Weight, a.Usage.InputTokens, a.Usage.OutputTokens, a.Usage.CostUSD, a.Summary, ms(a.StartedAt), ms(a.EndedAt))
	if err != nil {
		return translate(err, what)
	}
	return recordsInserted(tag.RowsAffected(), what, fmt.Sprintf("attempt %d epoch %d", a.Attempt, a.Epoch))
}

// recordsInserted turns an ON CONFLICT DO NOTHING insert that wrote no row into
// ErrDuplicateID, naming what already exists.
func recordsInserted(rows int64, what, existing string) error {
	if rows == 0 {
		return fmt.Errorf("%s: %w: %s already exists", what, domain.ErrDuplicateID, existing)
	}
	return nil
}

// AttemptList returns a mission's attempts, by attempt then epoch.
func (t *txn) AttemptList(ctx context.Context, missionID string) ([]domain.Attempt, error) {
	rows, err := t.q.Query(ctx, `SELECT mission_id, attempt, epoch, agent, profile, persona, outcome, failure,
 signature, weight, input_tokens, output_tokens, cost_usd, summary, started_at, ended_at
 FROM attempts WHERE mission_id = $1 ORDER BY attempt, epoch`, missionID)
	if err != nil {
		return nil, translate(err, "attempts of "+missionID)
	}
	defer rows.Close()
	var out []domain.Attempt
	for rows.Next() {
		var a domain.Attempt
		var failure sql.NullString
		var started, ended sql.NullInt64
		if err := rows.Scan(&a.MissionID, &a.Attempt, &a.Epoch, &a.Agent, &a.Profile, &a.Persona, &a.Outcome,
			&failure, &a.Signature, &a.Weight, &a.Usage.InputTokens, &a.Usage.OutputTokens, &a.Usage.CostUSD,
			&a.Summary, &started, &ended); err != nil {
			return nil, translate(err, "attempts of "+missionID)
		}
		a.Failure, a.StartedAt, a.EndedAt = decodeInto[domain.Failure](failure), fromMS(started), fromMS(ended)
		out = append(out, a)
	}
	return out, translate(rows.Err(), "attempts of "+missionID)
}

// AttemptOutcomes returns the attempt counts per (profile, persona) that the attempts
// trigger keeps (summed over their shards, schema 18), by profile then persona.
func (t *txn) AttemptOutcomes(ctx context.Context) ([]engine.OutcomeCount, error) {
	rows, err := t.q.Query(ctx, `SELECT profile, persona, sum(total)::bigint, sum(completed)::bigint
 FROM attempt_outcomes GROUP BY profile, persona HAVING sum(total) > 0 ORDER BY profile, persona`)
	if err != nil {
		return nil, translate(err, "attempt outcomes")
	}
	defer rows.Close()
	var out []engine.OutcomeCount
	for rows.Next() {
		var c engine.OutcomeCount
		if err := rows.Scan(&c.Profile, &c.Persona, &c.Total, &c.Completed); err != nil {
			return nil, translate(err, "attempt outcomes")
		}
		out = append(out, c)
	}
	return out, translate(rows.Err(), "attempt outcomes")
}

// LandingUpsert records (or, for the same mission and attempt, replaces) a landing.
func (t *txn) LandingUpsert(ctx context.Context, l *domain.Landing) error {
	_, err := t.q.Exec(ctx, `INSERT INTO landings (mission_id, attempt, status, target_branch, commit_id,
 old_target, new_target, changed, outside, conflicts, detail, duration_ms, at)
 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
 ON CONFLICT (mission_id, attempt) DO UPDATE SET status = excluded.status, target_branch = excluded.target_branch,
  commit_id = excluded.commit_id, old_target = excluded.old_target, new_target = excluded.new_target,
  changed = excluded.changed, outside = excluded.outside, conflicts = excluded.conflicts,
  detail = excluded.detail, duration_ms = excluded.duration_ms, at = excluded.at`, l.MissionID, l.Attempt, l.Status,
		l.TargetBranch, l.Commit, l.OldTarget, l.NewTarget, jsonText(recordsOrEmpty(l.ChangedFiles)),
		jsonText(recordsOrEmpty(l.OutsideWriteArea)), jsonText(recordsOrEmpty(l.ConflictPaths)), l.Detail, l.DurationMS, ms(l.At))
	return translate(err, "record landing of "+l.MissionID)
}

// recordsOrEmpty stores a nil list as [] in the NOT NULL JSON list columns.
func recordsOrEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// LandingList returns a mission's landings, by attempt.
func (t *txn) LandingList(ctx context.Context, missionID string) ([]domain.Landing, error) {
	rows, err := t.q.Query(ctx, `SELECT mission_id, attempt, status, target_branch, commit_id, old_target,
 new_target, changed, outside, conflicts, detail, duration_ms, at FROM landings WHERE mission_id = $1 ORDER BY attempt`, missionID)
	if err != nil {
		return nil, translate(err, "landings of "+missionID)
	}
	defer rows.Close()
	var out []domain.Landing
	for rows.Next() {
		var l domain.Landing
		var changed, outside, conflicts string
		var at sql.NullInt64
		if err := rows.Scan(&l.MissionID, &l.Attempt, &l.Status, &l.TargetBranch, &l.Commit, &l.OldTarget,
			&l.NewTarget, &changed, &outside, &conflicts, &l.Detail, &l.DurationMS, &at); err != nil {
			return nil, translate(err, "landings of "+missionID)
		}
		l.ChangedFiles, l.OutsideWriteArea, l.ConflictPaths, l.At = strList(changed), strList(outside), strList(conflicts), fromMS(at)
		out = append(out, l)
	}
	return out, translate(rows.Err(), "landings of "+missionID)
}

// AgentUpsert records (or replaces) an agent seen by the scheduler.
func (t *txn) AgentUpsert(ctx context.Context, a *domain.Agent) error {
	_, err := t.q.Exec(ctx, `INSERT INTO agents (id, kind, profile, capabilities, personas, last_seen, running)
 VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, profile = excluded.profile,
  capabilities = excluded.capabilities, personas = excluded.personas, last_seen = excluded.last_seen,
  running = excluded.running`, a.ID, a.Kind, a.Profile, jsonText(recordsOrEmpty(a.Capabilities)),
		jsonText(recordsOrEmpty(a.Personas)), ms(a.LastSeen), a.Running)
	return translate(err, "record agent "+a.ID)
}

// AgentList returns every agent, by id, each with the number of live missions it holds.
func (t *txn) AgentList(ctx context.Context) ([]domain.Agent, error) {
	return t.queryAgents(ctx, "list agents", true, `SELECT id, kind, profile, capabilities, personas, last_seen,
 (SELECT count(*) FROM missions WHERE state IN ('leased','running') AND (lease_owner = agents.id OR profile = agents.id))
 FROM agents ORDER BY id`)
}

// AgentsSeenSince returns the agents seen at or after since, most recent first (at most 1000).
func (t *txn) AgentsSeenSince(ctx context.Context, since time.Time) ([]domain.Agent, error) {
	return t.queryAgents(ctx, "recent agents", false, `SELECT id, kind, profile, capabilities, personas, last_seen
 FROM agents WHERE last_seen >= $1 ORDER BY last_seen DESC LIMIT 1000`, ms0(since))
}

// queryAgents reads agents rows (id, kind, profile, capabilities, personas, last_seen and,
// with running, the count of missions each holds).
func (t *txn) queryAgents(ctx context.Context, what string, running bool, q string, args ...any) ([]domain.Agent, error) {
	rows, err := t.q.Query(ctx, q, args...)
	if err != nil {
		return nil, translate(err, what)
	}
	defer rows.Close()
	var out []domain.Agent
	for rows.Next() {
		var a domain.Agent
		var caps, personas string
		var seen sql.NullInt64
		dest := []any{&a.ID, &a.Kind, &a.Profile, &caps, &personas, &seen}
		if running {
			dest = append(dest, &a.Running)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, translate(err, what)
		}
		a.Capabilities, a.Personas, a.LastSeen = strList(caps), strList(personas), fromMS(seen)
		out = append(out, a)
	}
	return out, translate(rows.Err(), what)
}

// AgentCount returns how many agents are recorded.
func (t *txn) AgentCount(ctx context.Context) (int, error) {
	var n int
	err := t.q.QueryRow(ctx, `SELECT count(*) FROM agents`).Scan(&n)
	return n, translate(err, "count agents")
}

// WaveInsert records one planning wave and sets w.ID.
func (t *txn) WaveInsert(ctx context.Context, w *domain.Wave) error {
	err := t.q.QueryRow(ctx, `INSERT INTO waves (at, runnable, dispatched, held) VALUES ($1, $2, $3, $4) RETURNING id`,
		ms(w.At), w.Runnable, jsonText(recordsOrEmptyEntries(w.Dispatched)), jsonText(recordsOrEmptyEntries(w.Held))).Scan(&w.ID)
	return translate(err, "record wave")
}

// recordsOrEmptyEntries stores a nil wave entry list as [].
func recordsOrEmptyEntries(e []domain.WaveEntry) []domain.WaveEntry {
	if e == nil {
		return []domain.WaveEntry{}
	}
	return e
}

// WaveLatest returns the most recent wave (ErrNotFound when none).
func (t *txn) WaveLatest(ctx context.Context) (domain.Wave, error) {
	var w domain.Wave
	var at sql.NullInt64
	var dispatched, held string
	err := t.q.QueryRow(ctx, `SELECT id, at, runnable, dispatched, held FROM waves ORDER BY id DESC LIMIT 1`).
		Scan(&w.ID, &at, &w.Runnable, &dispatched, &held)
	if err != nil {
		return w, translate(err, "latest wave")
	}
	w.At = fromMS(at)
	if err := json.Unmarshal([]byte(dispatched), &w.Dispatched); err != nil {
		return w, fmt.Errorf("latest wave %d: dispatched: %w", w.ID, err)
	}
	if err := json.Unmarshal([]byte(held), &w.Held); err != nil {
		return w, fmt.Errorf("latest wave %d: held: %w", w.ID, err)
	}
	return w, nil
}

// Paused reports the scheduler's pause flag.
func (t *txn) Paused(ctx context.Context) (bool, error) {
	var p int64
	err := t.q.QueryRow(ctx, `SELECT paused FROM scheduler WHERE id = 1`).Scan(&p)
	return p == 1, translate(err, "read pause flag")
}

// SetPaused sets the scheduler's pause flag.
func (t *txn) SetPaused(ctx context.Context, paused bool) error {
	_, err := t.q.Exec(ctx, `UPDATE scheduler SET paused = $1 WHERE id = 1`, boolInt(paused))
	return translate(err, "set pause flag")
}

// The leader lease: one row, id 1.

const leaderCols = `owner, epoch, expires_at, phase, host_locked`

func scanLeader(r rowScanner) (engine.Leader, error) {
	var l engine.Leader
	var exp sql.NullInt64
	var locked int64
	err := r.Scan(&l.Owner, &l.Epoch, &exp, &l.Phase, &locked)
	l.HostLocked = locked == 1
	l.ExpiresAt = fromMS(exp)
	return l, err
}

// LeaderGet returns the leader row.
func (t *txn) LeaderGet(ctx context.Context) (engine.Leader, error) {
	l, err := scanLeader(t.q.QueryRow(ctx, `SELECT `+leaderCols+` FROM leader WHERE id = 1`))
	return l, translate(err, "read leader")
}

// LeaderTry renews the owner's lease (same epoch) or takes a free, expired or proved-gone
// one (epoch+1), and returns the row after the attempt. Two nodes racing are safe: the
// guarded UPDATE row-locks the one leader row, and Update's SERIALIZABLE transaction aborts
// the later of two takers (40001) and runs it again, when it sees the first one's owner.
func (tx *txn) LeaderTry(ctx context.Context, lt engine.LeaderTake) (engine.Leader, error) {
	_, err := tx.q.Exec(ctx, `UPDATE leader SET
  epoch = CASE WHEN owner = $1::text AND expires_at >= $2::bigint THEN epoch ELSE epoch + 1 END,
  owner = $1::text, expires_at = $3, phase = $4, host_locked = $5
 WHERE id = 1 AND (owner = $1::text OR owner = '' OR expires_at < $2::bigint
   OR ($6::text <> '' AND owner = $6::text AND host_locked = 1))`,
		lt.Owner, lt.Now.UnixMilli(), lt.Now.Add(lt.TTL).UnixMilli(), lt.Phase, boolInt(lt.HostLocked), lt.Gone)
	if err != nil {
		return engine.Leader{}, translate(err, "take leadership")
	}
	return tx.LeaderGet(ctx)
}

// LeaderResign gives up leadership held by owner at epoch (another owner or epoch: nothing).
func (t *txn) LeaderResign(ctx context.Context, owner string, epoch int64) error {
	_, err := t.q.Exec(ctx, `UPDATE leader SET owner = '', expires_at = 0, phase = '', host_locked = 0
 WHERE id = 1 AND owner = $1 AND epoch = $2`, owner, epoch)
	return translate(err, "resign leadership")
}
