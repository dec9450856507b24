package storage

import (
	"context"
	"database/sql"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

const voyageCols = `id, idempotency_key, title, goal, repository, target_branch, state, cost_limit_usd,
 input_tokens, output_tokens, cost_usd, requirements_changed, escalation_id, created_at, updated_at, settled_at,
 token_limit`

func scanVoyage(r rowScanner) (domain.Voyage, error) {
	var v domain.Voyage
	var idem, esc sql.NullString
	var state string
	var changed int64
	var created, updated, settled sql.NullInt64
	err := r.Scan(&v.ID, &idem, &v.Title, &v.Goal, &v.Repository, &v.TargetBranch, &state, &v.CostLimitUSD,
		&v.Usage.InputTokens, &v.Usage.OutputTokens, &v.Usage.CostUSD, &changed, &esc, &created, &updated, &settled,
		&v.TokenLimit)
	v.IdempotencyKey, v.EscalationID, v.State = idem.String, esc.String, domain.VoyageState(state)
	v.RequirementsChanged = changed == 1
	v.CreatedAt, v.UpdatedAt, v.SettledAt = fromMS(created), fromMS(updated), fromMS(settled)
	return v, err
}

func voyageArgs(v *domain.Voyage) []any {
	return []any{nullStr(v.IdempotencyKey), v.Title, v.Goal, v.Repository, v.TargetBranch, string(v.State),
		v.CostLimitUSD, v.Usage.InputTokens, v.Usage.OutputTokens, v.Usage.CostUSD, boolInt(v.RequirementsChanged),
		nullStr(v.EscalationID), ms(v.CreatedAt), ms(v.UpdatedAt), ms(v.SettledAt), v.TokenLimit}
}

func (t *txn) VoyageInsert(ctx context.Context, v *domain.Voyage) error {
	args := append([]any{v.ID}, voyageArgs(v)...)
	_, err := t.q.exec(ctx, `INSERT INTO voyages (`+voyageCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	return translate(err, "insert voyage "+v.ID)
}

func (t *txn) VoyageUpdate(ctx context.Context, v *domain.Voyage, expect domain.VoyageState) error {
	args := append(voyageArgs(v), v.ID, string(expect))
	res, err := t.q.exec(ctx, `UPDATE voyages SET idempotency_key=?, title=?, goal=?, repository=?,
 target_branch=?, state=?, cost_limit_usd=?, input_tokens=?, output_tokens=?, cost_usd=?,
 requirements_changed=?, escalation_id=?, created_at=?, updated_at=?, settled_at=?, token_limit=? WHERE id = ? AND state = ?`, args...)
	if err != nil {
		return translate(err, "update voyage "+v.ID)
	}
	return guarded(res, "update voyage "+v.ID)
}

func (t *txn) VoyageGet(ctx context.Context, id string) (domain.Voyage, error) {
	v, err := scanVoyage(t.q.queryRow(ctx, `SELECT `+voyageCols+` FROM voyages WHERE id = ?`, id))
	return v, translate(err, "voyage "+id)
}

func (t *txn) VoyageByIdempotencyKey(ctx context.Context, key string) (domain.Voyage, error) {
	v, err := scanVoyage(t.q.queryRow(ctx, `SELECT `+voyageCols+` FROM voyages WHERE idempotency_key = ?`, key))
	return v, translate(err, "voyage with idempotency key "+key)
}

func (t *txn) VoyageList(ctx context.Context, states []domain.VoyageState, limit int) ([]domain.Voyage, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	var ss []string
	for _, s := range states {
		ss = append(ss, string(s))
	}
	q := `SELECT ` + voyageCols + ` FROM voyages ORDER BY id DESC LIMIT ?2`
	if ss != nil {
		// One walk of voyages_state per state, newest first, so that the open voyages the
		// scheduler settles each tick cost their number, not every voyage ever run.
		q = `SELECT ` + voyageCols + ` FROM voyages INDEXED BY voyages_state
 WHERE state IN (SELECT value FROM json_each(?1)) ORDER BY id DESC LIMIT ?2`
	}
	rows, err := t.q.query(ctx, q, jsonOrNull(ss), limit)
	if err != nil {
		return nil, translate(err, "list voyages")
	}
	defer rows.Close()
	var out []domain.Voyage
	for rows.Next() {
		v, err := scanVoyage(rows)
		if err != nil {
			return nil, translate(err, "list voyages")
		}
		out = append(out, v)
	}
	return out, translate(rows.Err(), "list voyages")
}

func (t *txn) VoyageCounts(ctx context.Context) (map[domain.VoyageState]int, error) {
	rows, err := t.q.query(ctx, `SELECT state, n FROM voyage_counts WHERE n > 0`)
	if err != nil {
		return nil, translate(err, "voyage counts")
	}
	defer rows.Close()
	out := map[domain.VoyageState]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, translate(err, "voyage counts")
		}
		out[domain.VoyageState(s)] = n
	}
	return out, translate(rows.Err(), "voyage counts")
}
