package storage

import (
	"context"
	"database/sql"
)

// A mission's token limit (schema 15) lives in its row but outside missionCols: only the
// transitions that set it and the budget checks read it, not the lease statements.

func (t *txn) MissionTokenLimitSet(ctx context.Context, id string, tokens int64) error {
	what := "set the token limit of mission " + id
	res, err := t.q.exec(ctx, `UPDATE missions SET token_limit = ? WHERE id = ?`, tokens, id)
	if err != nil {
		return translate(err, what)
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = sql.ErrNoRows
	}
	return translate(err, what)
}

func (t *txn) MissionTokenLimitGet(ctx context.Context, id string) (int64, error) {
	var n int64
	err := t.q.queryRow(ctx, `SELECT token_limit FROM missions WHERE id = ?`, id).Scan(&n)
	return n, translate(err, "token limit of mission "+id)
}
