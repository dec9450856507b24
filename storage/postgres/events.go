package postgres

import (
	"context"
	"database/sql"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The append-only event log, as the SQLite backend keeps it (storage/events.go).

// eventsLockClass and eventsLockKey name the transaction-scoped advisory lock that
// serialises event appends across every Store on the database (pg_advisory_xact_lock's
// two-key form, a key space apart from the one-key form used on hashes elsewhere).
const (
	eventsLockClass = 0x65766e74 // "evnt"
	eventsLockKey   = 1
)

// EventAppend adds e to the append-only log and sets e.Seq.
//
// Followers read the log with EventList(AfterSeq: the last seq they saw), so a seq must
// never become visible after a higher one: a follower would skip it for good. The identity
// column alone does not promise that under concurrent writers (transaction A takes seq 10,
// B takes 11 and commits first, a follower reads 11, A commits 10). So EventAppend first
// takes the events advisory lock, held until its transaction ends: seqs are handed out in
// the order the appending transactions commit, and a transaction that appends is visible
// before the next appender takes its seq (PostgreSQL releases transaction locks after the
// commit is visible). Appenders of all nodes queue on it; a rolled-back append leaves a gap,
// which followers do not mind.
//
// One statement (sqlEventAppend) takes the lock, inserts the row and queues the transaction's
// change notification: three round trips were two thirds of an append's cost.
func (t *txn) EventAppend(ctx context.Context, e *domain.Event) error {
	var data any
	if len(e.Data) > 0 {
		data = string(e.Data)
	}
	err := t.q.QueryRow(ctx, sqlEventAppend, ms(e.At), e.Type, nullStr(e.MissionID), nullStr(e.VoyageID),
		e.Epoch, e.Attempt, e.Actor, data, eventsLockClass, eventsLockKey, ChangeChannel).Scan(&e.Seq)
	if err == nil {
		t.notified = true
	}
	return translate(err, "append event "+e.Type)
}

// sqlEventAppend takes the events advisory lock (the CTE's row must exist before the insert
// projects its row, so the lock is held before the identity hands out seq), inserts the
// event, and queues pg_notify on ChangeChannel (sent at commit, once per transaction).
const sqlEventAppend = `WITH lock AS (SELECT pg_advisory_xact_lock($9::int4, $10::int4), pg_notify($11::text, ''))
INSERT INTO events (at, type, mission_id, voyage_id, epoch, attempt, actor, data)
SELECT $1::bigint, $2::text, $3::text, $4::text, $5::bigint, $6::bigint, $7::text, $8::text FROM lock
RETURNING seq`

// EventList returns the events after f.AfterSeq that match f's filters, in sequence order,
// at most f.Limit (≤ 0 or over 10000: 500).
func (t *txn) EventList(ctx context.Context, f engine.EventFilter) ([]domain.Event, error) {
	limit := f.Limit
	if limit <= 0 || limit > 10000 {
		limit = 500
	}
	rows, err := t.q.Query(ctx, eventListQuery(f), pgx.NamedArgs{"after": f.AfterSeq, "mission": f.MissionID,
		"voyage": f.VoyageID, "types": f.Types, "limit": limit})
	if err != nil {
		return nil, translate(err, "list events")
	}
	defer rows.Close()
	var out []domain.Event
	for rows.Next() {
		var e domain.Event
		var at sql.NullInt64
		var mission, voyage, data sql.NullString
		if err := rows.Scan(&e.Seq, &at, &e.Type, &mission, &voyage, &e.Epoch, &e.Attempt, &e.Actor, &data); err != nil {
			return nil, translate(err, "list events")
		}
		e.At, e.MissionID, e.VoyageID, e.Data = fromMS(at), mission.String, voyage.String, rawJSON(data)
		out = append(out, e)
	}
	return out, translate(rows.Err(), "list events")
}

// eventListQuery builds EventList's statement from the filters set, so that a mission's or a
// voyage's events are found through events_mission or events_voyage from AfterSeq, the
// others along the sequence from AfterSeq; never the whole log for a filter that matches few
// events. Its named arguments are EventList's pgx.NamedArgs.
func eventListQuery(f engine.EventFilter) string {
	where := []string{"seq > @after::bigint"}
	if f.MissionID != "" {
		where = append(where, "mission_id = @mission::text")
	}
	if f.VoyageID != "" {
		where = append(where, "voyage_id = @voyage::text")
	}
	if f.Types != nil {
		where = append(where, "type = ANY(@types::text[])")
	}
	return `SELECT seq, at, type, mission_id, voyage_id, epoch, attempt, actor, data FROM events WHERE ` +
		strings.Join(where, " AND ") + ` ORDER BY seq LIMIT @limit::bigint`
}
