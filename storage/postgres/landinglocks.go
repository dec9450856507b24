package postgres

import (
	"context"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Landing locks (cluster mode, engine.LandingLock): one row per target a node lands on, as in
// the SQLite backend (storage/landinglocks.go).

// LandingLockTry inserts the lock, or takes over an expired one, or renews this node's: one
// upsert whose WHERE leaves another node's live lock as it is. Two nodes racing for one
// target are safe: the upsert row-locks the conflicting row and re-checks the WHERE on its
// newest version, and Update's SERIALIZABLE transaction runs a loser again.
func (t *txn) LandingLockTry(ctx context.Context, l engine.LandingLock, now time.Time) (bool, error) {
	tag, err := t.q.Exec(ctx, `INSERT INTO landing_locks AS l (target_key, node, expires_at) VALUES ($1, $2::text, $3)
 ON CONFLICT (target_key) DO UPDATE SET node = $2::text, expires_at = $3
 WHERE l.node = $2::text OR l.expires_at <= $4`,
		l.Target, l.Node, l.ExpiresAt.UnixMilli(), now.UnixMilli())
	if err != nil {
		return false, translate(err, "take landing lock of "+l.Target)
	}
	return tag.RowsAffected() == 1, nil
}

// LandingLockRelease deletes node's lock of target (another node's stays).
func (t *txn) LandingLockRelease(ctx context.Context, target, node string) error {
	_, err := t.q.Exec(ctx, `DELETE FROM landing_locks WHERE target_key = $1 AND node = $2`, target, node)
	return translate(err, "release landing lock of "+target)
}

// LandingLocks returns the locks live at now, by target.
func (t *txn) LandingLocks(ctx context.Context, now time.Time) ([]engine.LandingLock, error) {
	rows, err := t.q.Query(ctx, `SELECT target_key, node, expires_at FROM landing_locks WHERE expires_at > $1 ORDER BY target_key`, now.UnixMilli())
	if err != nil {
		return nil, translate(err, "list landing locks")
	}
	defer rows.Close()
	var out []engine.LandingLock
	for rows.Next() {
		var l engine.LandingLock
		var exp int64
		if err := rows.Scan(&l.Target, &l.Node, &exp); err != nil {
			return nil, translate(err, "list landing locks")
		}
		l.ExpiresAt = time.UnixMilli(exp).UTC()
		out = append(out, l)
	}
	return out, translate(rows.Err(), "list landing locks")
}
