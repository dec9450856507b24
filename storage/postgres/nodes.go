package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Node leases (cluster mode, engine.Node): one row per node name, as in the SQLite backend
// (storage/nodes.go).

const nodeCols = `name, owner, epoch, expires_at, since, phase`

func scanNode(r rowScanner) (engine.Node, error) {
	var n engine.Node
	var exp, since sql.NullInt64
	err := r.Scan(&n.Name, &n.Owner, &n.Epoch, &exp, &since, &n.Phase)
	n.ExpiresAt, n.Since = fromMS(exp), fromMS(since)
	return n, err
}

// NodeGet returns name's node lease (a zero Node with Name set when none was taken).
func (t *txn) NodeGet(ctx context.Context, name string) (engine.Node, error) {
	n, err := scanNode(t.q.QueryRow(ctx, `SELECT `+nodeCols+` FROM nodes WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.Node{Name: name}, nil
	}
	return n, translate(err, "read node "+name)
}

// NodeList returns every node lease, by name.
func (t *txn) NodeList(ctx context.Context) ([]engine.Node, error) {
	rows, err := t.q.Query(ctx, `SELECT `+nodeCols+` FROM nodes ORDER BY name`)
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
// one (epoch+1, since = now); another live owner's row is left as it is. Two processes racing
// for one node are safe: the upsert row-locks it, and Update's SERIALIZABLE transaction runs
// the later one again, which then sees the first one's owner.
func (t *txn) NodeTry(ctx context.Context, nt engine.NodeTake) (engine.Node, error) {
	now := nt.Now.UnixMilli()
	_, err := t.q.Exec(ctx, `INSERT INTO nodes AS n (name, owner, epoch, expires_at, since, phase)
 VALUES ($1, $2::text, 1, $3, $4::bigint, $5)
 ON CONFLICT (name) DO UPDATE SET
  epoch = CASE WHEN n.owner = $2::text AND n.expires_at > $4::bigint THEN n.epoch ELSE n.epoch + 1 END,
  since = CASE WHEN n.owner = $2::text AND n.expires_at > $4::bigint THEN n.since ELSE $4::bigint END,
  owner = $2::text, expires_at = $3, phase = $5
 WHERE n.owner = $2::text OR n.expires_at <= $4::bigint`,
		nt.Name, nt.Owner, nt.Now.Add(nt.TTL).UnixMilli(), now, nt.Phase)
	if err != nil {
		return engine.Node{}, translate(err, "take node "+nt.Name)
	}
	return t.NodeGet(ctx, nt.Name)
}

// NodeForget deletes name's node row when its lease expired at now.
func (t *txn) NodeForget(ctx context.Context, name string, now time.Time) (bool, error) {
	tag, err := t.q.Exec(ctx, `DELETE FROM nodes WHERE name = $1 AND expires_at <= $2`, name, now.UnixMilli())
	if err != nil {
		return false, translate(err, "forget node "+name)
	}
	return tag.RowsAffected() > 0, nil
}

// NodeResign ends owner's lease of name at epoch (its expiry becomes now).
func (t *txn) NodeResign(ctx context.Context, name, owner string, epoch int64, now time.Time) error {
	_, err := t.q.Exec(ctx, `UPDATE nodes SET expires_at = $1, phase = '' WHERE name = $2 AND owner = $3 AND epoch = $4`,
		now.UnixMilli(), name, owner, epoch)
	return translate(err, "resign node "+name)
}
