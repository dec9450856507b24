package storage

import (
	"context"
	"database/sql"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// EventAppend adds e to the append-only log and sets e.Seq.
func (t *txn) EventAppend(ctx context.Context, e *domain.Event) error {
	var data any
	if len(e.Data) > 0 {
		data = string(e.Data)
	}
	err := t.q.queryRow(ctx, `INSERT INTO events (at, type, mission_id, voyage_id, epoch, attempt, actor, data)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`, ms(e.At), e.Type, nullStr(e.MissionID), nullStr(e.VoyageID),
		e.Epoch, e.Attempt, e.Actor, data).Scan(&e.Seq)
	return translate(err, "append event "+e.Type)
}

func (t *txn) EventList(ctx context.Context, f engine.EventFilter) ([]domain.Event, error) {
	limit := f.Limit
	if limit <= 0 || limit > 10000 {
		limit = 500
	}
	rows, err := t.q.query(ctx, eventListQuery(f), sql.Named("after", f.AfterSeq), sql.Named("mission", f.MissionID),
		sql.Named("voyage", f.VoyageID), sql.Named("types", jsonOrNull(f.Types)), sql.Named("limit", limit))
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

// eventListQuery builds EventList's statement from the filters set: a mission's or a
// voyage's events walk events_mission or events_voyage from AfterSeq, the others the
// sequence from AfterSeq; never the whole log for a filter that matches few events.
func eventListQuery(f engine.EventFilter) string {
	where := []string{"seq > @after"}
	from := "events"
	switch {
	case f.MissionID != "":
		from += " INDEXED BY events_mission"
	case f.VoyageID != "":
		from += " INDEXED BY events_voyage"
	}
	if f.MissionID != "" {
		where = append(where, "mission_id = @mission")
	}
	if f.VoyageID != "" {
		where = append(where, "voyage_id = @voyage")
	}
	if f.Types != nil {
		where = append(where, "type IN (SELECT value FROM json_each(@types))")
	}
	return `SELECT seq, at, type, mission_id, voyage_id, epoch, attempt, actor, data FROM ` + from +
		` WHERE ` + strings.Join(where, " AND ") + ` ORDER BY seq LIMIT @limit`
}
