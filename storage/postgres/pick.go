package postgres

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// runnableCond is design brief §3's "runnable" as SQL over mission alias m, the SQLite
// backend's (storage/pick.go): pending or interrupted without a wait reason, not_before
// passed, every hard dependency completed and landed, every serialization predecessor
// terminal, no conflict partner (edge or shared repository with an exclusive mission) leased
// or running, scheduler not paused. The agent's filters (@repo, @kinds, @personas, @caps;
// lists as text[], NULL for "any") narrow it. engine.Explain states the same rules in Go.
//
// Why it is safe under concurrent writers (engine/store.go, "Rules that span rows"): the
// acquire runs inside Update, at SERIALIZABLE. Two acquires that each find the other's
// mission not yet live each read a row (or the missions_live index range) the other writes:
// a cycle of read-write dependencies, which PostgreSQL's serializable snapshot isolation
// breaks by aborting one of them (40001); Update runs that one again on a new snapshot, which
// sees the other's lease. (The state counters no longer make two writers collide: since
// schema 18 each session counts in its own shard, so at REPEATABLE READ both missions would
// be leased; the isolation is what the rule rests on.) No
// per-repository pg_advisory_xact_lock is taken: a serializable transaction's snapshot is
// fixed at its first statement, before such a lock would be waited for, so the lock could not
// make the acquire see a lease committed meanwhile; only the serialization check can. The
// same holds for the dependency rows (an upstream's transition against a downstream's
// acquire). TestAcquire_TwoNodesLeaseOneOfTwoConflictingMissions checks it on two nodes.
const runnableCond = `m.state IN ('pending','interrupted')
  AND m.not_before <= @now AND m.wait_reason = ''
  AND (@repo::text = '' OR m.repository = @repo::text)
  AND (@kinds::text[] IS NULL OR m.kind = ANY(@kinds::text[]))
  AND (@personas::text[] IS NULL OR m.persona = '' OR m.persona = ANY(@personas::text[]))
  AND (m.capabilities = '[]' OR NOT EXISTS (SELECT 1 FROM json_array_elements_text(m.capabilities::json) AS c(v)
        WHERE c.v <> ALL(@caps::text[])))
  AND NOT EXISTS (SELECT 1 FROM dependencies AS d JOIN missions AS u ON u.id = d.depends_on
        WHERE d.mission_id = m.id AND (
          (d.type = 'hard' AND NOT (u.state = 'completed' AND u.landing IN ('landed','not_required')))
          OR (d.type = 'serialization' AND u.state NOT IN ('completed','failed','cancelled'))
          OR (d.type = 'conflict' AND u.state IN ('leased','running'))))
  AND NOT EXISTS (SELECT 1 FROM dependencies AS d JOIN missions AS u ON u.id = d.mission_id
        WHERE d.depends_on = m.id AND d.type = 'conflict' AND u.state IN ('leased','running'))
  AND NOT EXISTS (SELECT 1 FROM missions AS o WHERE o.repository = m.repository
        AND o.state IN ('leased','running')
        AND (o.write_area IS NULL OR o.serial = 1 OR m.write_area IS NULL OR m.serial = 1))
  AND (SELECT paused FROM scheduler WHERE id = 1) = 0`

// pickOrder is design brief §3's pick order; it matches index missions_pick. Ties of id
// follow the database's collation (C in the tests; SQLite compares bytes).
const pickOrder = `m.priority, (m.voyage_active > 0) DESC, (m.state = 'interrupted') DESC, m.created_at, m.id`

const acquireSet = `UPDATE missions SET
  state = CASE WHEN @start::boolean THEN 'running' ELSE 'leased' END,
  epoch = epoch + 1, attempt = attempt + 1, lease_owner = @owner, lease_expires_at = @exp,
  profile = @profile, node = @node, preempt = 0, contacted = 0, updated_at = @now,
  started_at = CASE WHEN @start::boolean THEN @now::bigint ELSE NULL END, finished_at = NULL`

var (
	// FOR UPDATE SKIP LOCKED: the pick locks the row it leases in the same statement, and a
	// concurrent acquire passes over a row another one is leasing instead of waiting for it
	// (and then failing to serialise), so concurrent agents take different missions.
	sqlAcquireNext = acquireSet + `
WHERE id = (SELECT m.id FROM missions AS m WHERE ` + runnableCond + `
  AND (@exclude::text[] IS NULL OR m.id <> ALL(@exclude::text[]))
 ORDER BY ` + pickOrder + ` LIMIT 1 FOR UPDATE OF m SKIP LOCKED)
RETURNING ` + acquiredCols
	sqlAcquireByID = acquireSet + `
WHERE id = (SELECT m.id FROM missions AS m WHERE m.id = @id AND ` + runnableCond + ` FOR UPDATE OF m SKIP LOCKED)
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

// scanAcquired reads one row of acquiredCols.
func scanAcquired(r rowScanner) (engine.Acquired, error) {
	var a engine.Acquired
	var voyage, owner sql.NullString
	var state string
	var expires, started sql.NullInt64
	var active int64
	err := r.Scan(&a.ID, &voyage, &state, &a.Attempt, &a.Lease.Epoch, &owner, &expires, &a.Profile,
		&a.Resumed, &active, &started)
	a.VoyageID, a.State, a.Lease.Owner = voyage.String, domain.MissionState(state), owner.String
	a.Lease.ExpiresAt, a.Started = fromMS(expires), fromMS(started)
	a.VoyageActive = active == 2 // 2: in progress (voyage_stage in the schema)
	return a, err
}

// MissionAcquire leases the first runnable mission matching q, in pick order, in one
// statement (engine.Tx); ErrNoWork when none is runnable. A mission another transaction is
// leasing right now is passed over (SKIP LOCKED): if that one rolls back, the mission is
// there for the next acquire.
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
	args := pgx.NamedArgs{
		"now": q.Now.UnixMilli(), "start": q.Start, "owner": q.Owner, "exp": q.Now.Add(q.LeaseTTL).UnixMilli(),
		"profile": q.Profile, "node": q.Node, "id": q.MissionID, "repo": q.Repository,
		"kinds": pickList(kindStrings(q.Kinds)), "personas": pickList(q.Personas),
		"caps": orEmpty(q.Capabilities), "exclude": pickList(q.Exclude),
	}
	scan := scanAcquired
	if q.Row {
		scan = scanAcquiredRow
	}
	var a engine.Acquired
	var err error
	if q.Repository == "" {
		a, err = t.genericPlan(ctx, query, args, scan)
	} else {
		a, err = scan(t.q.QueryRow(ctx, query, args))
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return a, domain.ErrNoWork
	}
	return a, translate(err, "acquire")
}

// genericPlan runs the acquire statement query under plan_cache_mode force_generic_plan (for
// this statement only, in one round trip with the two SETs around it) and scans its row.
//
// Why: pgx prepares the statement, and PostgreSQL then plans each execution for its
// parameter values (a custom plan) as long as that looks cheaper than the generic one; for
// the acquire it does, and planning the statement cost 1.2 ms of the 1.65 ms an acquire took
// (EXPLAIN ANALYZE: planning 1.18 ms, execution 0.33 ms; docs/benchmarks.md, "PostgreSQL").
// The generic plan, made once per connection and again after ANALYZE, walks missions_pick in
// pick order whatever the parameters, which is the custom plan too unless the agent names a
// repository: then a custom plan may use missions_repository_id, so MissionAcquire keeps it.
func (t *txn) genericPlan(ctx context.Context, query string, args pgx.NamedArgs, scan func(rowScanner) (engine.Acquired, error)) (engine.Acquired, error) {
	b := &pgx.Batch{}
	b.Queue("SET LOCAL plan_cache_mode = force_generic_plan")
	b.Queue(query, args)
	b.Queue("SET LOCAL plan_cache_mode TO DEFAULT")
	br := t.q.SendBatch(ctx, b)
	_, err := br.Exec()
	var a engine.Acquired
	if err == nil {
		a, err = scan(br.QueryRow())
	}
	if err == nil {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return a, err
}

// pickList is a filter list as the acquire's text[] parameter: NULL (match any) when empty,
// as the SQLite backend's JSON NULL.
func pickList(s []string) any {
	if len(s) == 0 {
		return nil
	}
	return s
}

// kindStrings is kinds as strings (nil for nil).
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

// scanAcquiredRow scans a whole mission (missionCols, then voyage_active = 2) and derives
// the lease from it.
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

var (
	sqlRunnableOrder = `SELECT ` + missionCols + ` FROM missions AS m
 WHERE m.state IN ('pending','interrupted') ORDER BY ` + pickOrder + ` LIMIT $1`
	sqlLeased  = `SELECT ` + missionCols + ` FROM missions WHERE state IN ('leased','running') ORDER BY id`
	sqlExpired = `SELECT ` + missionCols + ` FROM missions
 WHERE state IN ('leased','running') AND lease_expires_at < $1 ORDER BY lease_expires_at LIMIT $2`
	sqlPastDeadline = `SELECT ` + missionCols + ` FROM missions
 WHERE deadline IS NOT NULL AND deadline_escalated = 0 AND state NOT IN ('completed','failed','cancelled')
   AND deadline < $1 ORDER BY deadline LIMIT $2`
	// sqlLeaseFences reads the live missions' ids and epochs (index missions_live).
	sqlLeaseFences = `SELECT id, epoch FROM missions WHERE state IN ('leased','running')`
)

// MissionsRunnableOrder returns at most limit pending and interrupted missions in pick order,
// whatever their dependencies.
func (t *txn) MissionsRunnableOrder(ctx context.Context, limit int) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "runnable missions", sqlRunnableOrder, limit)
}

// MissionsLeased returns every leased and running mission, by id.
func (t *txn) MissionsLeased(ctx context.Context) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "leased missions", sqlLeased)
}

// LeaseFences returns the fence (id and epoch) of every leased or running mission.
func (t *txn) LeaseFences(ctx context.Context) ([]domain.Fence, error) {
	rows, err := t.q.Query(ctx, sqlLeaseFences)
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

// MissionsExpired returns at most limit leased or running missions whose lease expired
// strictly before now, earliest first.
func (t *txn) MissionsExpired(ctx context.Context, now time.Time, limit int) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "expired leases", sqlExpired, now.UnixMilli(), limit)
}

// MissionsPastDeadline returns at most limit unfinished missions whose deadline passed before
// now and was not escalated yet, earliest deadline first.
func (t *txn) MissionsPastDeadline(ctx context.Context, now time.Time, limit int) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "missions past deadline", sqlPastDeadline, now.UnixMilli(), limit)
}

// MissionCounts returns the number of missions per state, from the counters the schema's
// triggers keep in the writing transaction (the sum of each state's shards, schema 18).
func (t *txn) MissionCounts(ctx context.Context) (map[domain.MissionState]int, error) {
	rows, err := t.q.Query(ctx, `SELECT state, sum(n)::bigint FROM mission_counts GROUP BY state`)
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

// VoyageMissions returns a voyage's missions, oldest first.
func (t *txn) VoyageMissions(ctx context.Context, voyageID string) ([]domain.Mission, error) {
	return t.queryMissions(ctx, "missions of voyage "+voyageID,
		`SELECT `+missionCols+` FROM missions WHERE voyage_id = $1 ORDER BY created_at, id`, voyageID)
}
