package postgres

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Voyages, as the SQLite backend keeps them (storage/voyages.go).

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

// VoyageInsert stores a new voyage. A taken id or idempotency key is ErrDuplicateID; the
// insert is ON CONFLICT DO NOTHING and the duplicate is told from the row count, so that the
// transaction stays usable (a failed statement would abort it in PostgreSQL).
func (t *txn) VoyageInsert(ctx context.Context, v *domain.Voyage) error {
	args := append([]any{v.ID}, voyageArgs(v)...)
	tag, err := t.q.Exec(ctx, `INSERT INTO voyages (`+voyageCols+`)
 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) ON CONFLICT DO NOTHING`, args...)
	if err != nil {
		return translate(err, "insert voyage "+v.ID)
	}
	return recordsInserted(tag.RowsAffected(), "insert voyage "+v.ID, "a voyage with this id or idempotency key")
}

// VoyageUpdate rewrites a voyage still in state expect (else ErrGuard).
func (t *txn) VoyageUpdate(ctx context.Context, v *domain.Voyage, expect domain.VoyageState) error {
	args := append(voyageArgs(v), v.ID, string(expect))
	tag, err := t.q.Exec(ctx, `UPDATE voyages SET idempotency_key=$1, title=$2, goal=$3, repository=$4,
 target_branch=$5, state=$6, cost_limit_usd=$7, input_tokens=$8, output_tokens=$9, cost_usd=$10,
 requirements_changed=$11, escalation_id=$12, created_at=$13, updated_at=$14, settled_at=$15, token_limit=$16
 WHERE id = $17 AND state = $18`, args...)
	if err != nil {
		return translate(err, "update voyage "+v.ID)
	}
	return guarded(tag, "update voyage "+v.ID)
}

// VoyageGet returns a voyage (ErrNotFound when none).
func (t *txn) VoyageGet(ctx context.Context, id string) (domain.Voyage, error) {
	v, err := scanVoyage(t.q.QueryRow(ctx, `SELECT `+voyageCols+` FROM voyages WHERE id = $1`, id))
	return v, translate(err, "voyage "+id)
}

// VoyageByIdempotencyKey returns the voyage created with key (ErrNotFound when none).
func (t *txn) VoyageByIdempotencyKey(ctx context.Context, key string) (domain.Voyage, error) {
	v, err := scanVoyage(t.q.QueryRow(ctx, `SELECT `+voyageCols+` FROM voyages WHERE idempotency_key = $1`, key))
	return v, translate(err, "voyage with idempotency key "+key)
}

// VoyageList returns voyages newest id first, at most limit (≤ 0 or over 1000: 100), only
// those in states when states names any (through voyages_state); none named: every state,
// as the SQLite backend does.
func (t *txn) VoyageList(ctx context.Context, states []domain.VoyageState, limit int) ([]domain.Voyage, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	var rows pgx.Rows
	var err error
	if len(states) == 0 {
		rows, err = t.q.Query(ctx, `SELECT `+voyageCols+` FROM voyages ORDER BY id DESC LIMIT $1`, limit)
	} else {
		ss := make([]string, 0, len(states))
		for _, s := range states {
			ss = append(ss, string(s))
		}
		rows, err = t.q.Query(ctx, `SELECT `+voyageCols+` FROM voyages WHERE state = ANY($1::text[])
 ORDER BY id DESC LIMIT $2`, ss, limit)
	}
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

// VoyageCounts returns the number of voyages per state that the voyages trigger keeps
// (summed over their shards, schema 18; states with none are absent).
func (t *txn) VoyageCounts(ctx context.Context) (map[domain.VoyageState]int, error) {
	rows, err := t.q.Query(ctx, `SELECT state, sum(n)::bigint FROM voyage_counts GROUP BY state HAVING sum(n) > 0`)
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
