package storage

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// runnableCond is design brief §3's "runnable" as SQL over mission alias m: pending or
// interrupted without a wait reason, not_before passed, every hard dependency completed and
// landed, every serialization predecessor terminal, no conflict partner (edge or shared
// repository with an exclusive mission) leased or running, scheduler not paused. The agent's
// filters (@repo, @kinds, @personas, @caps) narrow it. engine.Explain states the same rules in
// Go, and a test checks that the two agree. The repository's live missions are found through
// missions_live (INDEXED BY: the planner would otherwise walk every mission of the
// repository through missions_repository_id), and the edges of m before the missions they
// name (CROSS JOIN fixes that order: the planner would otherwise walk every leased mission
// through missions_state_id for each candidate).
const runnableCond = `m.state IN ('pending','interrupted')
  AND m.not_before <= @now AND m.wait_reason = ''
  AND (@repo = '' OR m.repository = @repo)
  AND (@kinds IS NULL OR m.kind IN (SELECT value FROM json_each(@kinds)))
  AND (@personas IS NULL OR m.persona = '' OR m.persona IN (SELECT value FROM json_each(@personas)))
  AND (m.capabilities = '[]' OR NOT EXISTS (SELECT 1 FROM json_each(m.capabilities) AS c
        WHERE c.value NOT IN (SELECT value FROM json_each(@caps))))
  AND NOT EXISTS (SELECT 1 FROM dependencies AS d CROSS JOIN missions AS u ON u.id = d.depends_on
        WHERE d.mission_id = m.id AND (
          (d.type = 'hard' AND NOT (u.state = 'completed' AND u.landing IN ('landed','not_required')))
          OR (d.type = 'serialization' AND u.state NOT IN ('completed','failed','cancelled'))
          OR (d.type = 'conflict' AND u.state IN ('leased','running'))))
  AND NOT EXISTS (SELECT 1 FROM dependencies AS d CROSS JOIN missions AS u ON u.id = d.mission_id
        WHERE d.depends_on = m.id AND d.type = 'conflict' AND u.state IN ('leased','running'))
  AND NOT EXISTS (SELECT 1 FROM missions AS o INDEXED BY missions_live WHERE o.repository = m.repository
        AND o.state IN ('leased','running')
        AND (o.write_area IS NULL OR o.serial = 1 OR m.write_area IS NULL OR m.serial = 1))
  AND (SELECT paused FROM scheduler WHERE id = 1) = 0`

// pickOrder is design brief §3's pick order; it matches index missions_pick.
const pickOrder = `m.priority, (m.voyage_active > 0) DESC, (m.state = 'interrupted') DESC, m.created_at, m.id`

const acquireSet = `UPDATE missions SET
  state = CASE WHEN @start THEN 'running' ELSE 'leased' END,
  epoch = epoch + 1, attempt = attempt + 1, lease_owner = @owner, lease_expires_at = @exp,
  profile = @profile, node = @node, preempt = 0, contacted = 0, updated_at = @nowms,
  started_at = CASE WHEN @start THEN @nowms ELSE NULL END, finished_at = NULL`

var (
	// INDEXED BY: without statistics the planner prefers an index on state and sorts every
	// pending mission (O(n) per acquire: 15 ms at 10,000 pending); missions_pick walks them in
	// pick order and stops at the first runnable one.
	sqlAcquireNext = acquireSet + `
WHERE id = (SELECT m.id FROM missions AS m INDEXED BY missions_pick WHERE ` + runnableCond + `
  AND (@exclude IS NULL OR m.id NOT IN (SELECT value FROM json_each(@exclude)))
 ORDER BY ` + pickOrder + ` LIMIT 1)
RETURNING ` + acquiredCols
	sqlAcquireByID = acquireSet + `
WHERE id = (SELECT m.id FROM missions AS m WHERE m.id = @id AND ` + runnableCond + `)
RETURNING ` + acquiredCols
	// The same, returning the whole row (AcquireQuery.Row) and whether the voyage is in
	// progress (Acquired.VoyageActive; the row's VoyageActive says live, open included).
	sqlAcquireNextRow = strings.TrimSuffix(sqlAcquireNext, acquiredCols) + missionCols + `, voyage_active = 2`
	sqlAcquireByIDRow = strings.TrimSuffix(sqlAcquireByID, acquiredCols) + missionCols + `, voyage_active = 2`
)

// acquiredCols is what an acquire returns (engine.Acquired), in scanAcquired's order: the
// lease, not the row.
const acquiredCols = `id, voyage_id, state, attempt, epoch, lease_owner, lease_expires_at, profile,
 checkpoint IS NOT NULL, voyage_active, started_at`

func scanAcquired(r rowScanner) (engine.Acquired, error) {
	var a engine.Acquired
	var voyage, owner sql.NullString
	var state string
	var expires, started sql.NullInt64
	var resumed, active int64
	err := r.Scan(&a.ID, &voyage, &state, &a.Attempt, &a.Lease.Epoch, &owner, &expires, &a.Profile,
		&resumed, &active, &started)
	a.VoyageID, a.State, a.Lease.Owner = voyage.String, domain.MissionState(state), owner.String
	a.Lease.ExpiresAt, a.Started = fromMS(expires), fromMS(started)
	a.Resumed, a.VoyageActive = resumed == 1, active == 2 // 2: in progress (migration 0011)
	return a, err
}

func (t *txn) MissionAcquire(ctx context.Context, q engine.AcquireQuery) (engine.Acquired, error) {
	query := sqlAcquireNext
	switch {
	case q.MissionID != "" && q.Row:
		query = sqlAcquireByIDRow
	case q.MissionID != "":
		query = sqlAcquireByID
	case q.Row:
		query = sqlAcquireNextRow
	}
	now := q.Now.UnixMilli()
	args := []any{
		sql.Named("now", now), sql.Named("nowms", now), sql.Named("start", boolInt(q.Start)),
		sql.Named("owner", q.Owner), sql.Named("exp", q.Now.Add(q.LeaseTTL).UnixMilli()),
		sql.Named("profile", q.Profile), sql.Named("node", q.Node), sql.Named("id", q.MissionID), sql.Named("repo", q.Repository),
		sql.Named("kinds", jsonOrNull(kindStrings(q.Kinds))), sql.Named("personas", jsonOrNull(q.Personas)),
		sql.Named("caps", capsJSON(q.Capabilities)), sql.Named("exclude", jsonOrNull(q.Exclude)),
	}
	scan := scanAcquired
	if q.Row {
		scan = scanAcquiredRow
	}
	a, err := scan(t.q.queryRow(ctx, query, args...))
	if err == sql.ErrNoRows {
		return a, domain.ErrNoWork
	}
	return a, translate(err, "acquire")
}

// capsJSON is the agent's capabilities as a JSON array ("[]" for none, without encoding).
func capsJSON(caps []string) string {
	if len(caps) == 0 {
		return "[]"
	}
	return jsonText(caps)
}

func kindStrings(k []domain.MissionKind) []string {
	if k == nil {
		return nil
	}
	out := make([]string, len(k))
	for i, v := range k {
		out[i] = string(v)
	}
	return out
}

var (
	sqlRunnableOrder = `SELECT ` + missionCols + ` FROM missions AS m INDEXED BY missions_pick
 WHERE m.state IN ('pending','interrupted') ORDER BY ` + pickOrder + ` LIMIT ?`
	sqlLeased  = `SELECT ` + missionCols + ` FROM missions WHERE state IN ('leased','running') ORDER BY id`
	sqlExpired = `SELECT ` + missionCols + ` FROM missions
 WHERE state IN ('leased','running') AND lease_expires_at < ? ORDER BY lease_expires_at LIMIT ?`
	sqlPastDeadline = `SELECT ` + missionCols + ` FROM missions
 WHERE deadline IS NOT NULL AND deadline_escalated = 0 AND state NOT IN ('completed','failed','cancelled')
   AND deadline < ? ORDER BY deadline LIMIT ?`
)

func (t *txn) MissionsRunnableOrder(ctx context.Context, limit int) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "runnable missions", sqlRunnableOrder, limit)
}

func (t *txn) MissionsLeased(ctx context.Context) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "leased missions", sqlLeased)
}

// sqlLeaseFences reads the live missions' ids and epochs through missions_live.
// scanAcquiredRow scans a whole mission (missionCols) and derives the lease from it.
func scanAcquiredRow(r rowScanner) (engine.Acquired, error) {
	var inProgress bool
	m, err := scanMission(alsoScan{r, []any{&inProgress}})
	if err != nil {
		return engine.Acquired{}, err
	}
	return engine.Acquired{ID: m.ID, VoyageID: m.VoyageID, State: m.State, Attempt: m.Attempt, Lease: m.Lease,
		Profile: m.Profile, Resumed: m.Checkpoint != nil, VoyageActive: inProgress, Started: m.StartedAt, Row: &m}, nil
}

// alsoScan scans a row whose columns are another scanner's and then more (into extra).
type alsoScan struct {
	r     rowScanner
	extra []any
}

func (a alsoScan) Scan(dest ...any) error { return a.r.Scan(append(dest, a.extra...)...) }

const sqlLeaseFences = `SELECT id, epoch FROM missions INDEXED BY missions_live WHERE state IN ('leased','running')`

func (t *txn) LeaseFences(ctx context.Context) ([]domain.Fence, error) {
	rows, err := t.q.query(ctx, sqlLeaseFences)
	if err != nil {
		return nil, translate(err, "lease fences")
	}
	defer rows.Close()
	var out []domain.Fence
	for rows.Next() {
		var f domain.Fence
		if err := rows.Scan(&f.MissionID, &f.Epoch); err != nil {
			return nil, translate(err, "lease fences")
		}
		out = append(out, f)
	}
	return out, translate(rows.Err(), "lease fences")
}

func (t *txn) MissionsExpired(ctx context.Context, now time.Time, limit int) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "expired leases", sqlExpired, now.UnixMilli(), limit)
}

func (t *txn) MissionsPastDeadline(ctx context.Context, now time.Time, limit int) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "missions past deadline", sqlPastDeadline, now.UnixMilli(), limit)
}

func (t *txn) MissionCounts(ctx context.Context) (map[domain.MissionState]int, error) {
	rows, err := t.q.query(ctx, `SELECT state, n FROM mission_counts`)
	if err != nil {
		return nil, translate(err, "mission counts")
	}
	defer rows.Close()
	out := map[domain.MissionState]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, translate(err, "mission counts")
		}
		out[domain.MissionState(s)] = n
	}
	return out, translate(rows.Err(), "mission counts")
}

func (t *txn) VoyageMissions(ctx context.Context, voyageID string) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "missions of voyage "+voyageID,
		`SELECT `+missionCols+` FROM missions WHERE voyage_id = ? ORDER BY created_at, id`, voyageID)
}
