package storage

import (
	"context"
	"database/sql"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Rate windows: each limit group's paused or warned usage window (table rate_windows, schema 13).

const rateWindowCols = `grp, status, until_at, resets_at, limit_type, steps, profile, mission_id, why, since, updated_at`

func (t *txn) RateWindowPut(ctx context.Context, w *engine.RateWindow) error {
	_, err := t.q.exec(ctx, `INSERT INTO rate_windows (`+rateWindowCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
 ON CONFLICT (grp) DO UPDATE SET status = excluded.status, until_at = excluded.until_at,
   resets_at = excluded.resets_at, limit_type = excluded.limit_type, steps = excluded.steps,
   profile = excluded.profile, mission_id = excluded.mission_id, why = excluded.why,
   since = excluded.since, updated_at = excluded.updated_at`,
		w.Group, w.Status, ms0(w.Until), ms(w.ResetsAt), w.LimitType, w.Steps, w.Profile, w.MissionID, w.Why,
		ms0(w.Since), ms0(w.UpdatedAt))
	return translate(err, "record rate window of "+w.Group)
}

func (t *txn) RateWindowDelete(ctx context.Context, group string) error {
	_, err := t.q.exec(ctx, `DELETE FROM rate_windows WHERE grp = ?`, group)
	return translate(err, "clear rate window of "+group)
}

func (t *txn) RateWindowList(ctx context.Context) ([]engine.RateWindow, error) {
	rows, err := t.q.query(ctx, `SELECT `+rateWindowCols+` FROM rate_windows ORDER BY grp`)
	if err != nil {
		return nil, translate(err, "rate windows")
	}
	defer rows.Close()
	var out []engine.RateWindow
	for rows.Next() {
		var w engine.RateWindow
		var until, resets, since, updated sql.NullInt64
		if err := rows.Scan(&w.Group, &w.Status, &until, &resets, &w.LimitType, &w.Steps, &w.Profile, &w.MissionID,
			&w.Why, &since, &updated); err != nil {
			return nil, translate(err, "rate windows")
		}
		w.Until, w.ResetsAt, w.Since, w.UpdatedAt = fromMS(until), fromMS(resets), fromMS(since), fromMS(updated)
		out = append(out, w)
	}
	return out, translate(rows.Err(), "rate windows")
}
