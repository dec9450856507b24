package storage

import (
	"context"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Landing locks (cluster mode, engine.LandingLock): one row per target a node lands on.

// LandingLockTry inserts the lock, or takes over an expired one, or renews this node's: one
// upsert whose WHERE leaves another node's live lock as it is.
func (t *txn) LandingLockTry(ctx context.Context, l engine.LandingLock, now time.Time) (bool, error) {
	res, err := t.q.exec(ctx, `INSERT INTO landing_locks (target_key, node, expires_at) VALUES (?1, ?2, ?3)
 ON CONFLICT (target_key) DO UPDATE SET node = ?2, expires_at = ?3
 WHERE node = ?2 OR expires_at <= ?4`,
		l.Target, l.Node, l.ExpiresAt.UnixMilli(), now.UnixMilli())
	if err != nil {
		return false, translate(err, "take landing lock of "+l.Target)
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err, "take landing lock of "+l.Target)
}

func (t *txn) LandingLockRelease(ctx context.Context, target, node string) error {
	_, err := t.q.exec(ctx, `DELETE FROM landing_locks WHERE target_key = ? AND node = ?`, target, node)
	return translate(err, "release landing lock of "+target)
}

func (t *txn) LandingLocks(ctx context.Context, now time.Time) ([]engine.LandingLock, error) {
	rows, err := t.q.query(ctx, `SELECT target_key, node, expires_at FROM landing_locks WHERE expires_at > ? ORDER BY target_key`, now.UnixMilli())
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
