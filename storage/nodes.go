package storage

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Node leases (cluster mode, engine.Node): one row per node name.

const nodeCols = `name, owner, epoch, expires_at, since, phase`

func scanNode(r rowScanner) (engine.Node, error) {
	var n engine.Node
	var exp, since sql.NullInt64
	err := r.Scan(&n.Name, &n.Owner, &n.Epoch, &exp, &since, &n.Phase)
	n.ExpiresAt, n.Since = fromMS(exp), fromMS(since)
	return n, err
}

func (t *txn) NodeGet(ctx context.Context, name string) (engine.Node, error) {
	n, err := scanNode(t.q.queryRow(ctx, `SELECT `+nodeCols+` FROM nodes WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return engine.Node{Name: name}, nil
	}
	return n, translate(err, "read node "+name)
}

func (t *txn) NodeList(ctx context.Context) ([]engine.Node, error) {
	rows, err := t.q.query(ctx, `SELECT `+nodeCols+` FROM nodes ORDER BY name`)
	if err != nil {
		return nil, translate(err, "list nodes")
	}
	defer rows.Close()
	var out []engine.Node
	for rows.Next() {
		n, err := scanNode(rows)
		if err != nil {
			return nil, translate(err, "list nodes")
		}
		out = append(out, n)
	}
	return out, translate(rows.Err(), "list nodes")
}

// NodeTry renews the owner's lease (same epoch and since) or takes a new, free or expired
// one (epoch+1, since = now); another live owner's row is left as it is.
func (t *txn) NodeTry(ctx context.Context, nt engine.NodeTake) (engine.Node, error) {
	now := nt.Now.UnixMilli()
	_, err := t.q.exec(ctx, `INSERT INTO nodes (name, owner, epoch, expires_at, since, phase) VALUES (?1, ?2, 1, ?3, ?4, ?5)
 ON CONFLICT (name) DO UPDATE SET
  epoch = CASE WHEN owner = ?2 AND expires_at > ?4 THEN epoch ELSE epoch + 1 END,
  since = CASE WHEN owner = ?2 AND expires_at > ?4 THEN since ELSE ?4 END,
  owner = ?2, expires_at = ?3, phase = ?5
 WHERE owner = ?2 OR expires_at <= ?4`,
		nt.Name, nt.Owner, nt.Now.Add(nt.TTL).UnixMilli(), now, nt.Phase)
	if err != nil {
		return engine.Node{}, translate(err, "take node "+nt.Name)
	}
	return t.NodeGet(ctx, nt.Name)
}

// NodeForget deletes name's node row when its lease expired at now.
func (t *txn) NodeForget(ctx context.Context, name string, now time.Time) (bool, error) {
	res, err := t.q.exec(ctx, `DELETE FROM nodes WHERE name = ? AND expires_at <= ?`, name, now.UnixMilli())
	if err != nil {
		return false, translate(err, "forget node "+name)
	}
	n, err := res.RowsAffected()
	return n > 0, translate(err, "forget node "+name)
}

func (t *txn) NodeResign(ctx context.Context, name, owner string, epoch int64, now time.Time) error {
	_, err := t.q.exec(ctx, `UPDATE nodes SET expires_at = ?, phase = '' WHERE name = ? AND owner = ? AND epoch = ?`,
		now.UnixMilli(), name, owner, epoch)
	return translate(err, "resign node "+name)
}
