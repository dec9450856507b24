package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Attempts, landings, agents, waves, the pause flag and the leader lease.

func (t *txn) AttemptInsert(ctx context.Context, a *domain.Attempt) error {
	_, err := t.q.exec(ctx, `INSERT INTO attempts (mission_id, attempt, epoch, agent, profile, persona, outcome,
 failure, signature, weight, input_tokens, output_tokens, cost_usd, summary, started_at, ended_at)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.MissionID, a.Attempt, a.Epoch, a.Agent, a.Profile,
		a.Persona, a.Outcome, jsonOrNull(a.Failure), a.Signature, a.Weight, a.Usage.InputTokens,
		a.Usage.OutputTokens, a.Usage.CostUSD, a.Summary, ms(a.StartedAt), ms(a.EndedAt))
	return translate(err, "record attempt of "+a.MissionID)
}

func (t *txn) AttemptList(ctx context.Context, missionID string) ([]domain.Attempt, error) {
	rows, err := t.q.query(ctx, `SELECT mission_id, attempt, epoch, agent, profile, persona, outcome, failure,
 signature, weight, input_tokens, output_tokens, cost_usd, summary, started_at, ended_at
 FROM attempts WHERE mission_id = ? ORDER BY attempt, epoch`, missionID)
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

func (t *txn) AttemptOutcomes(ctx context.Context) ([]engine.OutcomeCount, error) {
	rows, err := t.q.query(ctx, `SELECT profile, persona, total, completed
 FROM attempt_outcomes WHERE total > 0 ORDER BY profile, persona`)
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

func (t *txn) LandingUpsert(ctx context.Context, l *domain.Landing) error {
	_, err := t.q.exec(ctx, `INSERT INTO landings (mission_id, attempt, status, target_branch, commit_id,
 old_target, new_target, changed, outside, conflicts, detail, duration_ms, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
 ON CONFLICT (mission_id, attempt) DO UPDATE SET status = excluded.status, target_branch = excluded.target_branch,
  commit_id = excluded.commit_id, old_target = excluded.old_target, new_target = excluded.new_target,
  changed = excluded.changed, outside = excluded.outside, conflicts = excluded.conflicts,
  detail = excluded.detail, duration_ms = excluded.duration_ms, at = excluded.at`, l.MissionID, l.Attempt, l.Status,
		l.TargetBranch, l.Commit, l.OldTarget, l.NewTarget, jsonText(orEmpty(l.ChangedFiles)), jsonText(orEmpty(l.OutsideWriteArea)),
		jsonText(orEmpty(l.ConflictPaths)), l.Detail, l.DurationMS, ms(l.At))
	return translate(err, "record landing of "+l.MissionID)
}

func (t *txn) LandingList(ctx context.Context, missionID string) ([]domain.Landing, error) {
	rows, err := t.q.query(ctx, `SELECT mission_id, attempt, status, target_branch, commit_id, old_target,
 new_target, changed, outside, conflicts, detail, duration_ms, at FROM landings WHERE mission_id = ? ORDER BY attempt`, missionID)
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

func (t *txn) AgentUpsert(ctx context.Context, a *domain.Agent) error {
	_, err := t.q.exec(ctx, `INSERT INTO agents (id, kind, profile, capabilities, personas, last_seen, running)
 VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, profile = excluded.profile,
  capabilities = excluded.capabilities, personas = excluded.personas, last_seen = excluded.last_seen,
  running = excluded.running`, a.ID, a.Kind, a.Profile, jsonText(orEmpty(a.Capabilities)),
		jsonText(orEmpty(a.Personas)), ms(a.LastSeen), a.Running)
	return translate(err, "record agent "+a.ID)
}

func (t *txn) AgentList(ctx context.Context) ([]domain.Agent, error) {
	return t.queryAgents(ctx, "list agents", true, `SELECT id, kind, profile, capabilities, personas, last_seen,
 (SELECT count(*) FROM missions WHERE state IN ('leased','running') AND (lease_owner = agents.id OR profile = agents.id))
 FROM agents ORDER BY id`)
}

func (t *txn) AgentsSeenSince(ctx context.Context, since time.Time) ([]domain.Agent, error) {
	return t.queryAgents(ctx, "recent agents", false, `SELECT id, kind, profile, capabilities, personas, last_seen
 FROM agents INDEXED BY agents_last_seen WHERE last_seen >= ? ORDER BY last_seen DESC LIMIT 1000`, ms0(since))
}

// queryAgents reads agents rows (id, kind, profile, capabilities, personas, last_seen and,
// with running, the count of missions each holds).
func (t *txn) queryAgents(ctx context.Context, what string, running bool, q string, args ...any) ([]domain.Agent, error) {
	rows, err := t.q.query(ctx, q, args...)
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

func (t *txn) WaveInsert(ctx context.Context, w *domain.Wave) error {
	err := t.q.queryRow(ctx, `INSERT INTO waves (at, runnable, dispatched, held) VALUES (?, ?, ?, ?) RETURNING id`,
		ms(w.At), w.Runnable, jsonText(orEmptyEntries(w.Dispatched)), jsonText(orEmptyEntries(w.Held))).Scan(&w.ID)
	return translate(err, "record wave")
}

func orEmptyEntries(e []domain.WaveEntry) []domain.WaveEntry {
	if e == nil {
		return []domain.WaveEntry{}
	}
	return e
}

func (t *txn) WaveLatest(ctx context.Context) (domain.Wave, error) {
	var w domain.Wave
	var at sql.NullInt64
	var dispatched, held string
	err := t.q.queryRow(ctx, `SELECT id, at, runnable, dispatched, held FROM waves ORDER BY id DESC LIMIT 1`).
		Scan(&w.ID, &at, &w.Runnable, &dispatched, &held)
	if err != nil {
		return w, translate(err, "latest wave")
	}
	w.At = fromMS(at)
	_ = json.Unmarshal([]byte(dispatched), &w.Dispatched) // written by WaveInsert
	_ = json.Unmarshal([]byte(held), &w.Held)
	return w, nil
}

func (t *txn) Paused(ctx context.Context) (bool, error) {
	var p int64
	err := t.q.queryRow(ctx, `SELECT paused FROM scheduler WHERE id = 1`).Scan(&p)
	return p == 1, translate(err, "read pause flag")
}

func (t *txn) SetPaused(ctx context.Context, paused bool) error {
	_, err := t.q.exec(ctx, `UPDATE scheduler SET paused = ? WHERE id = 1`, boolInt(paused))
	return translate(err, "set pause flag")
}

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

func (t *txn) LeaderGet(ctx context.Context) (engine.Leader, error) {
	l, err := scanLeader(t.q.queryRow(ctx, `SELECT `+leaderCols+` FROM leader WHERE id = 1`))
	return l, translate(err, "read leader")
}

// LeaderTry renews the owner's lease (same epoch) or takes a free, expired or proved-gone
// one (epoch+1).
func (t *txn) LeaderTry(ctx context.Context, lt engine.LeaderTake) (engine.Leader, error) {
	_, err := t.q.exec(ctx, `UPDATE leader SET
  epoch = CASE WHEN owner = ?1 AND expires_at >= ?2 THEN epoch ELSE epoch + 1 END,
  owner = ?1, expires_at = ?3, phase = ?4, host_locked = ?5
 WHERE id = 1 AND (owner = ?1 OR owner = '' OR expires_at < ?2 OR (?6 <> '' AND owner = ?6 AND host_locked = 1))`,
		lt.Owner, lt.Now.UnixMilli(), lt.Now.Add(lt.TTL).UnixMilli(), lt.Phase, boolInt(lt.HostLocked), lt.Gone)
	if err != nil {
		return engine.Leader{}, translate(err, "take leadership")
	}
	return t.LeaderGet(ctx)
}

func (t *txn) LeaderResign(ctx context.Context, owner string, epoch int64) error {
	_, err := t.q.exec(ctx, `UPDATE leader SET owner = '', expires_at = 0, phase = '', host_locked = 0 WHERE id = 1 AND owner = ? AND epoch = ?`, owner, epoch)
	return translate(err, "resign leadership")
}

func (t *txn) AgentCount(ctx context.Context) (int, error) {
	var n int
	err := t.q.queryRow(ctx, `SELECT count(*) FROM agents`).Scan(&n)
	return n, translate(err, "count agents")
}
