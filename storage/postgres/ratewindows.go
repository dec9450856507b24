package postgres

import (
	"context"
	"database/sql"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Rate windows: each limit group's paused or warned usage window (table rate_windows).

const rateWindowCols = `grp, status, until_at, resets_at, limit_type, steps, profile, mission_id, why, since, updated_at`

// RateWindowPut records (or replaces) the window of w.Group in one upsert.
func (t *txn) RateWindowPut(ctx context.Context, w *engine.RateWindow) error {
	_, err := t.q.Exec(ctx, `INSERT INTO rate_windows (`+rateWindowCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
 ON CONFLICT (grp) DO UPDATE SET status = excluded.status, until_at = excluded.until_at,
   resets_at = excluded.resets_at, limit_type = excluded.limit_type, steps = excluded.steps,
   profile = excluded.profile, mission_id = excluded.mission_id, why = excluded.why,
   since = excluded.since, updated_at = excluded.updated_at`,
		w.Group, w.Status, ms0(w.Until), ms(w.ResetsAt), w.LimitType, w.Steps, w.Profile, w.MissionID, w.Why,
		ms0(w.Since), ms0(w.UpdatedAt))
	return translate(err, "record rate window of "+w.Group)
}

// RateWindowDelete removes a group's window (none: no error).
func (t *txn) RateWindowDelete(ctx context.Context, group string) error {
	_, err := t.q.Exec(ctx, `DELETE FROM rate_windows WHERE grp = $1`, group)
	return translate(err, "clear rate window of "+group)
}

// RateWindowList returns every stored window, by group.
func (t *txn) RateWindowList(ctx context.Context) ([]engine.RateWindow, error) {
	rows, err := t.q.Query(ctx, `SELECT `+rateWindowCols+` FROM rate_windows ORDER BY grp`)
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
