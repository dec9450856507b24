package storage

import (
	"context"
	"database/sql"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Holds: why the planner holds each waiting mission back (table holds, schema 2).

const holdCols = `mission_id, code, message, other_id, until_at, since, updated_at`

func (t *txn) HoldUpsert(ctx context.Context, h *engine.Hold) error {
	// Only while the mission exists: the planner decided on a snapshot, and history pruning may
	// have removed the mission since (a hold of it would break the foreign key and fail the
	// whole planning step).
	_, err := t.q.exec(ctx, `INSERT INTO holds (`+holdCols+`) SELECT ?, ?, ?, ?, ?, ?, ?
 WHERE EXISTS (SELECT 1 FROM missions WHERE id = ?)
 ON CONFLICT (mission_id) DO UPDATE SET code = excluded.code, message = excluded.message,
   other_id = excluded.other_id, until_at = excluded.until_at, since = excluded.since,
   updated_at = excluded.updated_at`,
		h.MissionID, h.Reason.Code, h.Reason.Message, h.Reason.MissionID, ms(h.Reason.Until),
		ms0(h.Reason.Since), ms0(h.UpdatedAt), h.MissionID)
	return translate(err, "record hold of "+h.MissionID)
}

func (t *txn) HoldDelete(ctx context.Context, missionID string) error {
	_, err := t.q.exec(ctx, `DELETE FROM holds WHERE mission_id = ?`, missionID)
	return translate(err, "clear hold of "+missionID)
}

func (t *txn) HoldGet(ctx context.Context, missionID string) (engine.Hold, error) {
	h, err := scanHold(t.q.queryRow(ctx, `SELECT `+holdCols+` FROM holds WHERE mission_id = ?`, missionID))
	if err == sql.ErrNoRows {
		return h, domain.ErrNotFound
	}
	return h, translate(err, "hold of "+missionID)
}

func (t *txn) HoldList(ctx context.Context) ([]engine.Hold, error) {
	rows, err := t.q.query(ctx, `SELECT `+holdCols+` FROM holds ORDER BY mission_id`)
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
// key: as a plain join SQLite walked missions_state over every completed mission instead, a
// cost that grew with history (TestHoldCountsPlan_WalksTheHoldsNotTheHistory).
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
	rows, err := t.q.query(ctx, sqlHoldCounts)
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

func scanHold(s interface{ Scan(...any) error }) (engine.Hold, error) {
	var h engine.Hold
	var until, since, updated sql.NullInt64
	err := s.Scan(&h.MissionID, &h.Reason.Code, &h.Reason.Message, &h.Reason.MissionID, &until, &since, &updated)
	h.Reason.Until, h.Reason.Since, h.UpdatedAt = fromMS(until), fromMS(since), fromMS(updated)
	return h, err
}
