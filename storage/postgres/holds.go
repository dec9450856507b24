package postgres

import (
	"context"
	"database/sql"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Holds: why the planner holds each waiting mission back, as the SQLite backend keeps them
// (storage/holds.go).

const holdCols = `mission_id, code, message, other_id, until_at, since, updated_at`

// HoldUpsert records (or replaces) the hold of h.MissionID.
func (t *txn) HoldUpsert(ctx context.Context, h *engine.Hold) error {
	// Only while the mission exists (see storage/holds.go): a foreign-key error would abort
	// the whole transaction here.
	_, err := t.q.Exec(ctx, `INSERT INTO holds (`+holdCols+`) SELECT $1, $2, $3, $4, $5, $6, $7
 WHERE EXISTS (SELECT 1 FROM missions WHERE id = $1)
 ON CONFLICT (mission_id) DO UPDATE SET code = excluded.code, message = excluded.message,
   other_id = excluded.other_id, until_at = excluded.until_at, since = excluded.since,
   updated_at = excluded.updated_at`,
		h.MissionID, h.Reason.Code, h.Reason.Message, h.Reason.MissionID, ms(h.Reason.Until),
		ms0(h.Reason.Since), ms0(h.UpdatedAt))
	return translate(err, "record hold of "+h.MissionID)
}

// HoldDelete removes the hold of a mission (none: no error).
func (t *txn) HoldDelete(ctx context.Context, missionID string) error {
	_, err := t.q.Exec(ctx, `DELETE FROM holds WHERE mission_id = $1`, missionID)
	return translate(err, "clear hold of "+missionID)
}

// HoldGet returns the hold of a mission (ErrNotFound when none).
func (t *txn) HoldGet(ctx context.Context, missionID string) (engine.Hold, error) {
	h, err := scanHold(t.q.QueryRow(ctx, `SELECT `+holdCols+` FROM holds WHERE mission_id = $1`, missionID))
	return h, translate(err, "hold of "+missionID)
}

// HoldList returns every hold, by mission id.
func (t *txn) HoldList(ctx context.Context) ([]engine.Hold, error) {
	rows, err := t.q.Query(ctx, `SELECT `+holdCols+` FROM holds ORDER BY mission_id`)
	if err != nil {
		return nil, translate(err, "holds")
	}
	defer rows.Close()
	var out []engine.Hold
	for rows.Next() {
		h, err := scanHold(rows)
		if err != nil {
			return nil, translate(err, "holds")
		}
		out = append(out, h)
	}
	return out, translate(rows.Err(), "holds")
}

// sqlHoldCounts walks the holds (one per waiting mission) and looks each mission up by its
// key, so that the cost follows the waiting missions, not the history.
const sqlHoldCounts = `SELECT h.code, count(*) FROM holds AS h
 WHERE EXISTS (SELECT 1 FROM missions AS m WHERE m.id = h.mission_id
   AND (m.state IN ('pending','interrupted')
    OR (m.state = 'completed' AND m.landing IN ('pending','review','approved','waiting','approval','repair'))))
 GROUP BY h.code`

// HoldCounts counts the holds of missions that still wait to run (pending, interrupted) or,
// completed, to land (a landing the planner gives a wait: the landing queue's states, approval
// and repair). A hold left over from before a mission moved on is not counted. The result maps
// a hold code to its count (codes with no counted hold are absent); a failed read is returned
// as the store's translated error.
func (t *txn) HoldCounts(ctx context.Context) (map[string]int, error) {
	rows, err := t.q.Query(ctx, sqlHoldCounts)
	if err != nil {
		return nil, translate(err, "hold counts")
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var code string
		var n int
		if err := rows.Scan(&code, &n); err != nil {
			return nil, translate(err, "hold counts")
		}
		out[code] = n
	}
	return out, translate(rows.Err(), "hold counts")
}

func scanHold(s rowScanner) (engine.Hold, error) {
	var h engine.Hold
	var until, since, updated sql.NullInt64
	err := s.Scan(&h.MissionID, &h.Reason.Code, &h.Reason.Message, &h.Reason.MissionID, &until, &since, &updated)
	h.Reason.Until, h.Reason.Since, h.UpdatedAt = fromMS(until), fromMS(since), fromMS(updated)
	return h, err
}
