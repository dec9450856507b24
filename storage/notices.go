package storage

import (
	"context"
	"database/sql"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The notification outbox (tables notice_cursor and notices, schema 12).

const noticeCols = `id, sink, event_seq, type, body, created_at, attempts, next_at, last_error, gave_up_at`

func (t *txn) NoticeCursor(ctx context.Context) (int64, error) {
	var seq int64
	err := t.q.queryRow(ctx, `SELECT seq FROM notice_cursor WHERE id = 1`).Scan(&seq)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	return seq, translate(err, "notice cursor")
}

func (t *txn) NoticeEnqueue(ctx context.Context, cursor int64, ns []engine.Notice) error {
	for i := range ns {
		n := &ns[i]
		err := t.q.queryRow(ctx, `INSERT INTO notices (sink, event_seq, type, body, created_at, attempts, next_at, last_error)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, n.Sink, n.EventSeq, n.Type, string(n.Body), ms0(n.CreatedAt),
			n.Attempts, ms0(n.NextAt), n.LastError).Scan(&n.ID)
		if err != nil {
			return translate(err, "queue notice for "+n.Sink)
		}
	}
	_, err := t.q.exec(ctx, `INSERT INTO notice_cursor (id, seq) VALUES (1, ?)
 ON CONFLICT (id) DO UPDATE SET seq = excluded.seq`, cursor)
	return translate(err, "move notice cursor")
}

func (t *txn) NoticeDelete(ctx context.Context, id int64) error {
	_, err := t.q.exec(ctx, `DELETE FROM notices WHERE id = ?`, id)
	return translate(err, "delete notice")
}

func (t *txn) NoticeRetry(ctx context.Context, n *engine.Notice) error {
	res, err := t.q.exec(ctx, `UPDATE notices SET attempts = ?, next_at = ?, last_error = ?, gave_up_at = ? WHERE id = ?`,
		n.Attempts, ms0(n.NextAt), n.LastError, ms(n.GaveUpAt), n.ID)
	if err != nil {
		return translate(err, "record notice delivery")
	}
	if k, err := res.RowsAffected(); err != nil || k == 0 {
		return domain.ErrNotFound
	}
	return nil
}

func (t *txn) NoticePrune(ctx context.Context, before time.Time) (int, error) {
	res, err := t.q.exec(ctx, `DELETE FROM notices WHERE gave_up_at IS NOT NULL AND gave_up_at < ?`, ms0(before))
	if err != nil {
		return 0, translate(err, "prune notices")
	}
	k, err := res.RowsAffected()
	return int(k), translate(err, "prune notices")
}

func (t *txn) NoticesDue(ctx context.Context, now time.Time, limit int) ([]engine.Notice, error) {
	return t.notices(ctx, `SELECT `+noticeCols+` FROM notices INDEXED BY notices_due
 WHERE gave_up_at IS NULL AND next_at <= ? ORDER BY next_at, id LIMIT ?`, ms0(now), pageLimit(limit))
}

func (t *txn) NoticesGaveUp(ctx context.Context, limit int) ([]engine.Notice, error) {
	return t.notices(ctx, `SELECT `+noticeCols+` FROM notices INDEXED BY notices_gave_up
 WHERE gave_up_at IS NOT NULL ORDER BY gave_up_at DESC, id DESC LIMIT ?`, pageLimit(limit))
}

func (t *txn) NoticeCounts(ctx context.Context) (engine.NoticeCounts, error) {
	var c engine.NoticeCounts
	err := t.q.queryRow(ctx, `SELECT
   coalesce(sum(gave_up_at IS NULL), 0), coalesce(sum(gave_up_at IS NULL AND attempts > 0), 0),
   coalesce(sum(gave_up_at IS NOT NULL), 0) FROM notices`).Scan(&c.Pending, &c.Failing, &c.GaveUp)
	return c, translate(err, "count notices")
}

func (t *txn) notices(ctx context.Context, query string, args ...any) ([]engine.Notice, error) {
	rows, err := t.q.query(ctx, query, args...)
	if err != nil {
		return nil, translate(err, "list notices")
	}
	defer rows.Close()
	var out []engine.Notice
	for rows.Next() {
		var n engine.Notice
		var body string
		var created, next, gave sql.NullInt64
		if err := rows.Scan(&n.ID, &n.Sink, &n.EventSeq, &n.Type, &body, &created, &n.Attempts, &next, &n.LastError, &gave); err != nil {
			return nil, translate(err, "list notices")
		}
		n.Body, n.CreatedAt, n.NextAt, n.GaveUpAt = []byte(body), fromMS(created), fromMS(next), fromMS(gave)
		out = append(out, n)
	}
	return out, translate(rows.Err(), "list notices")
}

// pageLimit keeps a listing's limit to 1..1,000 (100 otherwise).
func pageLimit(n int) int {
	if n < 1 || n > 1000 {
		return 100
	}
	return n
}
