package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// pruneStates are the terminal mission states, walked one after the other through the
// missions_state (state, created_at) index: one state at a time keeps the walk in index order
// (an IN over the three would sort every match before the LIMIT). The index is partial, over
// these states only (schema 10: live transitions do not touch it), so the walk's queries also
// name them literally (finishedCond): the planner uses a partial index only when the query's
// WHERE implies the index's.
var pruneStates = []domain.MissionState{domain.StateCompleted, domain.StateFailed, domain.StateCancelled}

// missionCursor is "<state index>:<created_at ms>:<rowid>".
func parseCursor(c string) (state int, created, row int64) {
	parts := strings.Split(c, ":")
	if len(parts) != 3 {
		return 0, -1, -1
	}
	state, _ = strconv.Atoi(parts[0])
	created, _ = strconv.ParseInt(parts[1], 10, 64)
	row, _ = strconv.ParseInt(parts[2], 10, 64)
	return state, created, row
}

// The candidate walk continues after (created_at, rowid) in two index searches: the rest of
// the cursor's millisecond by rowid, then the later ones. (A row-value comparison only used
// the index for created_at, and rescanned every mission of the cursor's millisecond: a bulk
// import made the walk quadratic.)
const (
	finishedCond   = `state IN ('completed','failed','cancelled')`
	sqlPruneSameMs = `SELECT id, created_at, rowid FROM missions
 WHERE ` + finishedCond + ` AND state = @state AND created_at = @created AND created_at < @before AND rowid > @row
 ORDER BY rowid LIMIT @limit`
	sqlPruneCandidates = `SELECT id, created_at, rowid FROM missions
 WHERE ` + finishedCond + ` AND state = @state AND created_at > @created AND created_at < @before
 ORDER BY created_at, rowid LIMIT @limit`
)

func (t *txn) PruneCandidates(ctx context.Context, q engine.PruneQuery) ([]engine.PruneCandidate, error) {
	limit := max(q.Limit, 1)
	si, created, row := parseCursor(q.Cursor)
	var out []engine.PruneCandidate
	for ; si < len(pruneStates) && len(out) < limit; si, created, row = si+1, -1, -1 {
		for _, query := range []string{sqlPruneSameMs, sqlPruneCandidates} {
			if len(out) >= limit {
				break
			}
			page, err := t.pruneCandidates(ctx, query, si, q.Before, created, row, limit-len(out))
			if err != nil {
				return nil, err
			}
			out = append(out, page...)
		}
	}
	return out, nil
}

func (t *txn) pruneCandidates(ctx context.Context, query string, si int, before time.Time, created, row int64, limit int) ([]engine.PruneCandidate, error) {
	rows, err := t.q.query(ctx, query, sql.Named("state", string(pruneStates[si])), sql.Named("before", ms0(before)),
		sql.Named("created", created), sql.Named("row", row), sql.Named("limit", limit))
	if err != nil {
		return nil, translate(err, "list prune candidates")
	}
	defer rows.Close()
	var out []engine.PruneCandidate
	for rows.Next() {
		var c engine.PruneCandidate
		var at, rid int64
		if err := rows.Scan(&c.ID, &at, &rid); err != nil {
			return nil, translate(err, "list prune candidates")
		}
		c.Cursor = fmt.Sprintf("%d:%d:%d", si, at, rid)
		out = append(out, c)
	}
	return out, translate(rows.Err(), "list prune candidates")
}

// sqlUnfinishedRelated counts the unfinished missions that depend on a mission (any edge
// type, through dependencies_reverse) and those whose parent or subject it is (through
// missions_parent and missions_subject).
const sqlUnfinishedRelated = `SELECT
 (SELECT count(*) FROM dependencies d JOIN missions m ON m.id = d.mission_id
   WHERE d.depends_on = @id AND m.state NOT IN ('completed','failed','cancelled')),
 (SELECT count(*) FROM missions WHERE parent_id = @id AND state NOT IN ('completed','failed','cancelled'))
 + (SELECT count(*) FROM missions WHERE subject_id = @id AND state NOT IN ('completed','failed','cancelled'))`

func (t *txn) UnfinishedRelated(ctx context.Context, id string) (dependents, related int, err error) {
	err = t.q.queryRow(ctx, sqlUnfinishedRelated, sql.Named("id", id)).Scan(&dependents, &related)
	return dependents, related, translate(err, "count unfinished missions related to "+id)
}

func (t *txn) VoyagePruneCandidates(ctx context.Context, q engine.PruneQuery) ([]engine.PruneCandidate, error) {
	after, _ := strconv.ParseInt(q.Cursor, 10, 64)
	rows, err := t.q.query(ctx, `SELECT id, rowid FROM voyages WHERE rowid > ? AND state IN ('completed','cancelled')
  AND settled_at IS NOT NULL AND settled_at < ? ORDER BY rowid LIMIT ?`, after, ms0(q.Before), max(q.Limit, 1))
	if err != nil {
		return nil, translate(err, "list voyage prune candidates")
	}
	defer rows.Close()
	var out []engine.PruneCandidate
	for rows.Next() {
		var c engine.PruneCandidate
		var rid int64
		if err := rows.Scan(&c.ID, &rid); err != nil {
			return nil, translate(err, "list voyage prune candidates")
		}
		c.Cursor = strconv.FormatInt(rid, 10)
		out = append(out, c)
	}
	return out, translate(rows.Err(), "list voyage prune candidates")
}

// sqlPruneEscalations removes resolved escalations that name the deleted row (a mission in
// mission_ids, or the voyage) and concern nothing still stored: none of their missions and
// not their voyage. Open escalations are never removed (the engine keeps their missions).
const sqlPruneEscalations = `DELETE FROM escalations WHERE state = 'resolved'
  AND (voyage_id = @id OR EXISTS (SELECT 1 FROM json_each(mission_ids) WHERE value = @id))
  AND NOT EXISTS (SELECT 1 FROM json_each(mission_ids) j JOIN missions m ON m.id = j.value)
  AND (voyage_id IS NULL OR NOT EXISTS (SELECT 1 FROM voyages v WHERE v.id = escalations.voyage_id))`

// execCount runs a statement and returns the rows it changed.
func (t *txn) execCount(ctx context.Context, what, q string, args ...any) (int, error) {
	res, err := t.q.exec(ctx, q, args...)
	if err != nil {
		return 0, translate(err, what)
	}
	n, err := res.RowsAffected()
	return int(n), translate(err, what)
}

func (t *txn) MissionPrune(ctx context.Context, id string) (engine.PruneCounts, error) {
	var c engine.PruneCounts
	n, err := t.execCount(ctx, "prune mission "+id, sqlMissionDelete, id)
	if err != nil {
		return c, err
	}
	if n == 0 {
		return c, fmt.Errorf("prune mission %s: %w", id, domain.ErrNotFound)
	}
	c.Missions = n
	for _, d := range []struct {
		n   *int
		sql string
	}{
		{&c.Events, `DELETE FROM events WHERE mission_id = ?`},
		{&c.Attempts, `DELETE FROM attempts WHERE mission_id = ?`},
		{&c.Landings, `DELETE FROM landings WHERE mission_id = ?`},
		{&c.Workspaces, `DELETE FROM workspaces WHERE mission_id = ?`},
	} {
		if *d.n, err = t.execCount(ctx, "prune mission "+id, d.sql, id); err != nil {
			return c, err
		}
	}
	c.Escalations, err = t.execCount(ctx, "prune escalations of "+id, sqlPruneEscalations, sql.Named("id", id))
	return c, err
}

func (t *txn) VoyagePrune(ctx context.Context, id string) (engine.PruneCounts, error) {
	var c engine.PruneCounts
	var left int
	if err := t.q.queryRow(ctx, `SELECT count(*) FROM missions WHERE voyage_id = ?`, id).Scan(&left); err != nil {
		return c, translate(err, "prune voyage "+id)
	}
	if left > 0 {
		return c, fmt.Errorf("prune voyage %s: %d missions remain: %w", id, left, domain.ErrGuard)
	}
	n, err := t.execCount(ctx, "prune voyage "+id, `DELETE FROM voyages WHERE id = ?`, id)
	if err != nil {
		return c, err
	}
	if n == 0 {
		return c, fmt.Errorf("prune voyage %s: %w", id, domain.ErrNotFound)
	}
	c.Voyages = n
	if c.Events, err = t.execCount(ctx, "prune voyage "+id, `DELETE FROM events WHERE voyage_id = ?`, id); err != nil {
		return c, err
	}
	c.Escalations, err = t.execCount(ctx, "prune escalations of "+id, sqlPruneEscalations, sql.Named("id", id))
	return c, err
}

// sqlPruneGlobalEvents deletes the oldest events of no mission and no voyage from before
// @before. The seq bound (the first event at or after @before) stops the walk there instead
// of at the end of the log; events are appended in time order.
const sqlPruneGlobalEvents = `DELETE FROM events WHERE seq IN (SELECT seq FROM events
  WHERE seq < coalesce((SELECT seq FROM events WHERE at >= @before ORDER BY seq LIMIT 1), 9223372036854775807)
    AND mission_id IS NULL AND voyage_id IS NULL AND at < @before ORDER BY seq LIMIT @limit)`

func (t *txn) PruneGlobal(ctx context.Context, before time.Time, limit int) (engine.PruneCounts, error) {
	var c engine.PruneCounts
	var err error
	if c.Waves, err = t.execCount(ctx, "prune waves", `DELETE FROM waves WHERE id IN
  (SELECT id FROM waves WHERE at < ? ORDER BY id LIMIT ?)`, ms0(before), limit); err != nil {
		return c, err
	}
	c.Events, err = t.execCount(ctx, "prune scheduler events", sqlPruneGlobalEvents,
		sql.Named("before", ms0(before)), sql.Named("limit", limit))
	return c, err
}
