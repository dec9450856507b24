package postgres

import (
	"context"
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// A mission's token limit lives in its row but outside the mission column list: only the
// transitions that set it and the budget checks read it, not the lease statements.

// MissionTokenLimitSet sets a mission's token limit (input plus output tokens; 0: none).
// ErrNotFound comes from the count of updated rows, so the transaction stays usable.
func (t *txn) MissionTokenLimitSet(ctx context.Context, id string, tokens int64) error {
	what := "set the token limit of mission " + id
	tag, err := t.q.Exec(ctx, `UPDATE missions SET token_limit = $1 WHERE id = $2`, tokens, id)
	if err != nil {
		return translate(err, what)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", what, domain.ErrNotFound)
	}
	return nil
}

// MissionTokenLimitGet returns a mission's token limit; ErrNotFound: no mission.
func (t *txn) MissionTokenLimitGet(ctx context.Context, id string) (int64, error) {
	var n int64
	err := t.q.QueryRow(ctx, `SELECT token_limit FROM missions WHERE id = $1`, id).Scan(&n)
	return n, translate(err, "token limit of mission "+id)
}
