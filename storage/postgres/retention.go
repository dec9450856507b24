package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// pruneStates are the terminal mission states, walked one after the other through the
// missions_state (state, created_at) index: one state at a time keeps the walk in index order
// (an IN over the three would sort every match before the LIMIT). The index is partial, over
// these states only, so the walk's queries also name them literally (finishedCond):
// PostgreSQL uses a partial index only when it can prove the query's WHERE implies the
// index's, and a parameter (state = $1) proves nothing in a generic plan.
var pruneStates = []domain.MissionState{domain.StateCompleted, domain.StateFailed, domain.StateCancelled}

// A mission prune cursor is "<state index>:<created_at ms>:<id>". PostgreSQL has no rowid, so
// the mission id (the primary key) orders the missions of one millisecond; the id is the
// last part and may itself hold colons.
func parseCursor(c string) (state int, created int64, id string) {
	parts := strings.SplitN(c, ":", 3)
	if len(parts) != 3 {
		return 0, -1, ""
	}
	state, _ = strconv.Atoi(parts[0])
	created, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return state, -1, ""
	}
	return state, created, parts[2]
}

// The candidate walk continues after (created_at, id) in two searches, as the SQLite
// backend's: the rest of the cursor's millisecond by id, then the later ones (by created_at
// from missions_state, then id). missions_state has no id column (the schema matches
// SQLite's, whose index ends in the rowid), so a page inside one millisecond reads every
// finished mission of that millisecond and sorts them by id: cheap unless a bulk import put
// very many in one millisecond; an index on (state, created_at, id) would be a schema change.
const (
	finishedCond   = `state IN ('completed','failed','cancelled')`
	sqlPruneSameMs = `SELECT id, created_at FROM missions
 WHERE ` + finishedCond + ` AND state = @state AND created_at = @created AND created_at < @before AND id > @id
 ORDER BY id LIMIT @limit`
	sqlPruneCandidates = `SELECT id, created_at FROM missions
 WHERE ` + finishedCond + ` AND state = @state AND created_at > @created AND created_at < @before
 ORDER BY created_at, id LIMIT @limit`
)

// PruneCandidates returns finished missions created before q.Before, after q.Cursor, at most
// q.Limit (at least 1), state by state in (created_at, id) order.
func (t *txn) PruneCandidates(ctx context.Context, q engine.PruneQuery) ([]engine.PruneCandidate, error) {
	limit := max(q.Limit, 1)
	si, created, id := parseCursor(q.Cursor)
	var out []engine.PruneCandidate
	for ; si < len(pruneStates) && len(out) < limit; si, created, id = si+1, -1, "" {
		for _, query := range []string{sqlPruneSameMs, sqlPruneCandidates} {
			if len(out) >= limit {
				break
			}
			page, err := t.pruneCandidates(ctx, query, si, q.Before, created, id, limit-len(out))
			if err != nil {
				return nil, err
			}
			out = append(out, page...)
		}
	}
	return out, nil
}

// pruneCandidates runs one search of the walk for pruneStates[si].
func (t *txn) pruneCandidates(ctx context.Context, query string, si int, before time.Time, created int64, id string, limit int) ([]engine.PruneCandidate, error) {
	rows, err := t.q.Query(ctx, query, pgx.NamedArgs{"state": string(pruneStates[si]), "before": ms0(before),
		"created": created, "id": id, "limit": limit})
	if err != nil {
		return nil, translate(err, "list prune candidates")
	}
	defer rows.Close()
	var out []engine.PruneCandidate
	for rows.Next() {
		var c engine.PruneCandidate
		var at int64
		if err := rows.Scan(&c.ID, &at); err != nil {
			return nil, translate(err, "list prune candidates")
		}
		c.Cursor = fmt.Sprintf("%d:%d:%s", si, at, c.ID)
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

// UnfinishedRelated counts the unfinished dependents of id and the unfinished missions whose
// parent or subject it is.
func (t *txn) UnfinishedRelated(ctx context.Context, id string) (dependents, related int, err error) {
	err = t.q.QueryRow(ctx, sqlUnfinishedRelated, pgx.NamedArgs{"id": id}).Scan(&dependents, &related)
	return dependents, related, translate(err, "count unfinished missions related to "+id)
}

// VoyagePruneCandidates returns completed or cancelled voyages settled before q.Before, after
// q.Cursor, at most q.Limit (at least 1). PostgreSQL has no rowid: the walk is in id order
// (voyages_state (state, id)) and the cursor is the last id.
func (t *txn) VoyagePruneCandidates(ctx context.Context, q engine.PruneQuery) ([]engine.PruneCandidate, error) {
	rows, err := t.q.Query(ctx, `SELECT id FROM voyages WHERE id > $1 AND state IN ('completed','cancelled')
  AND settled_at IS NOT NULL AND settled_at < $2 ORDER BY id LIMIT $3`, q.Cursor, ms0(q.Before), max(q.Limit, 1))
	if err != nil {
		return nil, translate(err, "list voyage prune candidates")
	}
	defer rows.Close()
	var out []engine.PruneCandidate
	for rows.Next() {
		var c engine.PruneCandidate
		if err := rows.Scan(&c.ID); err != nil {
			return nil, translate(err, "list voyage prune candidates")
		}
		c.Cursor = c.ID
		out = append(out, c)
	}
	return out, translate(rows.Err(), "list voyage prune candidates")
}

// sqlPruneEscalations removes resolved escalations that name the deleted row (a mission in
// mission_ids, or the voyage) and concern nothing still stored: none of their missions and
// not their voyage. Open escalations are never removed (the engine keeps their missions).
// mission_ids is JSON text, read as a set by json_array_elements_text (SQLite: json_each).
const sqlPruneEscalations = `DELETE FROM escalations WHERE state = 'resolved'
  AND (voyage_id = @id OR EXISTS (SELECT 1 FROM json_array_elements_text(mission_ids::json) AS j(value) WHERE j.value = @id))
  AND NOT EXISTS (SELECT 1 FROM json_array_elements_text(mission_ids::json) AS j(value) JOIN missions m ON m.id = j.value)
  AND (voyage_id IS NULL OR NOT EXISTS (SELECT 1 FROM voyages v WHERE v.id = escalations.voyage_id))`

// execCount runs a statement and returns the rows it changed.
func (t *txn) execCount(ctx context.Context, what, q string, args ...any) (int, error) {
	tag, err := t.q.Exec(ctx, q, args...)
	if err != nil {
		return 0, translate(err, what)
	}
	return int(tag.RowsAffected()), nil
}

// MissionPrune deletes a mission and what was recorded only for it. The mission goes first:
// the rows that reference it by foreign key (dependencies both ways, write areas, its hold,
// its running usage) go with it by ON DELETE CASCADE, and the history tables (events,
// attempts, landings, workspaces) have no foreign key. ErrNotFound (from the count of
// deleted rows, so the transaction stays usable) when it is gone.
func (t *txn) MissionPrune(ctx context.Context, id string) (engine.PruneCounts, error) {
	var c engine.PruneCounts
	n, err := t.execCount(ctx, "prune mission "+id, `DELETE FROM missions WHERE id = $1`, id)
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
		{&c.Events, `DELETE FROM events WHERE mission_id = $1`},
		{&c.Attempts, `DELETE FROM attempts WHERE mission_id = $1`},
		{&c.Landings, `DELETE FROM landings WHERE mission_id = $1`},
		{&c.Workspaces, `DELETE FROM workspaces WHERE mission_id = $1`},
	} {
		if *d.n, err = t.execCount(ctx, "prune mission "+id, d.sql, id); err != nil {
			return c, err
		}
	}
	c.Escalations, err = t.execCount(ctx, "prune escalations of "+id, sqlPruneEscalations, pgx.NamedArgs{"id": id})
	return c, err
}

// VoyagePrune deletes a voyage that has no mission left, with its events and the resolved
// escalations that concern nothing still stored. ErrGuard when missions remain and
// ErrNotFound when it is gone are decided before any failing statement, so the engine can
// go on in the same transaction (it does: the prune walk skips such voyages).
func (t *txn) VoyagePrune(ctx context.Context, id string) (engine.PruneCounts, error) {
	var c engine.PruneCounts
	var left int
	if err := t.q.QueryRow(ctx, `SELECT count(*) FROM missions WHERE voyage_id = $1`, id).Scan(&left); err != nil {
		return c, translate(err, "prune voyage "+id)
	}
	if left > 0 {
		return c, fmt.Errorf("prune voyage %s: %d missions remain: %w", id, left, domain.ErrGuard)
	}
	n, err := t.execCount(ctx, "prune voyage "+id, `DELETE FROM voyages WHERE id = $1`, id)
	if err != nil {
		return c, err
	}
	if n == 0 {
		return c, fmt.Errorf("prune voyage %s: %w", id, domain.ErrNotFound)
	}
	c.Voyages = n
	if c.Events, err = t.execCount(ctx, "prune voyage "+id, `DELETE FROM events WHERE voyage_id = $1`, id); err != nil {
		return c, err
	}
	c.Escalations, err = t.execCount(ctx, "prune escalations of "+id, sqlPruneEscalations, pgx.NamedArgs{"id": id})
	return c, err
}

// sqlPruneGlobalEvents deletes the oldest events of no mission and no voyage from before
// @before. The seq bound (the first event at or after @before) stops the walk there instead
// of at the end of the log; events are appended in time order.
const sqlPruneGlobalEvents = `DELETE FROM events WHERE seq IN (SELECT seq FROM events
  WHERE seq < coalesce((SELECT seq FROM events WHERE at >= @before ORDER BY seq LIMIT 1), 9223372036854775807)
    AND mission_id IS NULL AND voyage_id IS NULL AND at < @before ORDER BY seq LIMIT @limit)`

// PruneGlobal deletes at most limit waves and at most limit events of no mission or voyage
// from before before. A negative limit is no limit, as in SQLite (PostgreSQL refuses a
// negative LIMIT; LIMIT NULL is none).
func (t *txn) PruneGlobal(ctx context.Context, before time.Time, limit int) (engine.PruneCounts, error) {
	var c engine.PruneCounts
	var lim any = limit
	if limit < 0 {
		lim = nil
	}
	var err error
	if c.Waves, err = t.execCount(ctx, "prune waves", `DELETE FROM waves WHERE id IN
  (SELECT id FROM waves WHERE at < $1 ORDER BY id LIMIT $2)`, ms0(before), lim); err != nil {
		return c, err
	}
	c.Events, err = t.execCount(ctx, "prune scheduler events", sqlPruneGlobalEvents,
		pgx.NamedArgs{"before": ms0(before), "limit": lim})
	return c, err
}
