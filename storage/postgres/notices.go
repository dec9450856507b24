package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The notification outbox (tables notice_cursor and notices). Notice IDs come from the
// notices identity column in insertion order, so a transaction's notices get increasing IDs.

const noticeCols = `id, sink, event_seq, type, body, created_at, attempts, next_at, last_error, gave_up_at`

// NoticeCursor returns the sequence of the last event turned into notices (0 when unset).
func (t *txn) NoticeCursor(ctx context.Context) (int64, error) {
	var seq int64
	err := t.q.QueryRow(ctx, `SELECT seq FROM notice_cursor WHERE id = 1`).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return seq, translate(err, "notice cursor")
}

// NoticeEnqueue inserts ns one by one (each ID from RETURNING, in order) and moves the
// cursor, in the caller's transaction.
func (t *txn) NoticeEnqueue(ctx context.Context, cursor int64, ns []engine.Notice) error {
	for i := range ns {
		n := &ns[i]
		err := t.q.QueryRow(ctx, `INSERT INTO notices (sink, event_seq, type, body, created_at, attempts, next_at, last_error)
 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`, n.Sink, n.EventSeq, n.Type, string(n.Body), ms0(n.CreatedAt),
			n.Attempts, ms0(n.NextAt), n.LastError).Scan(&n.ID)
		if err != nil {
			return translate(err, "queue notice for "+n.Sink)
		}
	}
	_, err := t.q.Exec(ctx, `INSERT INTO notice_cursor (id, seq) VALUES (1, $1)
 ON CONFLICT (id) DO UPDATE SET seq = excluded.seq`, cursor)
	return translate(err, "move notice cursor")
}

// NoticeDelete removes a delivered notice; an absent one is no error.
func (t *txn) NoticeDelete(ctx context.Context, id int64) error {
	_, err := t.q.Exec(ctx, `DELETE FROM notices WHERE id = $1`, id)
	return translate(err, "delete notice")
}

// NoticeRetry writes n's delivery fields; ErrNotFound (from the count of updated rows, so
// the transaction stays usable) when the notice is gone.
func (t *txn) NoticeRetry(ctx context.Context, n *engine.Notice) error {
	tag, err := t.q.Exec(ctx, `UPDATE notices SET attempts = $1, next_at = $2, last_error = $3, gave_up_at = $4 WHERE id = $5`,
		n.Attempts, ms0(n.NextAt), n.LastError, ms(n.GaveUpAt), n.ID)
	if err != nil {
		return translate(err, "record notice delivery")
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("record delivery of notice %d: %w", n.ID, domain.ErrNotFound)
	}
	return nil
}

// NoticePrune deletes the notices given up before before and returns how many.
func (t *txn) NoticePrune(ctx context.Context, before time.Time) (int, error) {
	tag, err := t.q.Exec(ctx, `DELETE FROM notices WHERE gave_up_at IS NOT NULL AND gave_up_at < $1`, ms0(before))
	if err != nil {
		return 0, translate(err, "prune notices")
	}
	return int(tag.RowsAffected()), nil
}

// sqlNoticesDue and sqlNoticesGaveUp repeat the WHERE of the partial indexes notices_due and
// notices_gave_up literally, so that PostgreSQL can prove the index applies.
const (
	sqlNoticesDue = `SELECT ` + noticeCols + ` FROM notices
 WHERE gave_up_at IS NULL AND next_at <= $1 ORDER BY next_at, id LIMIT $2`
	sqlNoticesGaveUp = `SELECT ` + noticeCols + ` FROM notices
 WHERE gave_up_at IS NOT NULL ORDER BY gave_up_at DESC, id DESC LIMIT $1`
)

// NoticesDue returns the notices not given up that are due at now, by next_at then id,
// through the partial index notices_due.
func (t *txn) NoticesDue(ctx context.Context, now time.Time, limit int) ([]engine.Notice, error) {
	return t.notices(ctx, sqlNoticesDue, ms0(now), pageLimit(limit))
}

// NoticesGaveUp returns the given-up notices, most recently given up first, through the
// partial index notices_gave_up.
func (t *txn) NoticesGaveUp(ctx context.Context, limit int) ([]engine.Notice, error) {
	return t.notices(ctx, sqlNoticesGaveUp, pageLimit(limit))
}

// NoticeCounts counts the pending (and of them the failing) and the given-up notices.
// PostgreSQL cannot sum booleans as SQLite does, so each count is an aggregate FILTER.
func (t *txn) NoticeCounts(ctx context.Context) (engine.NoticeCounts, error) {
	var c engine.NoticeCounts
	err := t.q.QueryRow(ctx, `SELECT count(*) FILTER (WHERE gave_up_at IS NULL),
   count(*) FILTER (WHERE gave_up_at IS NULL AND attempts > 0),
   count(*) FILTER (WHERE gave_up_at IS NOT NULL) FROM notices`).Scan(&c.Pending, &c.Failing, &c.GaveUp)
	return c, translate(err, "count notices")
}

// notices runs a query returning noticeCols and scans every row.
func (t *txn) notices(ctx context.Context, query string, args ...any) ([]engine.Notice, error) {
	rows, err := t.q.Query(ctx, query, args...)
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
