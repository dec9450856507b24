package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Budgets: the running spend of attempts in flight (usage_running) and what each profile
// spent per day (spend_daily).

const usageRunningCols = `mission_id, attempt, epoch, voyage_id, profile, model, input_tokens, output_tokens,
 cache_read_tokens, cache_write_tokens, cost_usd, priced, updated_at`

// UsageRunningPut records (or replaces) the running spend of u.MissionID's attempt in one
// upsert. A mission that does not exist is ErrUnknownMission (the foreign key).
func (t *txn) UsageRunningPut(ctx context.Context, u *engine.RunningUsage) error {
	_, err := t.q.Exec(ctx, `INSERT INTO usage_running (`+usageRunningCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
 ON CONFLICT (mission_id) DO UPDATE SET attempt = excluded.attempt, epoch = excluded.epoch, voyage_id = excluded.voyage_id,
   profile = excluded.profile, model = excluded.model, input_tokens = excluded.input_tokens,
   output_tokens = excluded.output_tokens, cache_read_tokens = excluded.cache_read_tokens,
   cache_write_tokens = excluded.cache_write_tokens, cost_usd = excluded.cost_usd,
   priced = excluded.priced, updated_at = excluded.updated_at`,
		u.MissionID, u.Attempt, u.Epoch, u.VoyageID, u.Profile, u.Model, u.Usage.InputTokens, u.Usage.OutputTokens,
		u.Usage.CacheReadTokens, u.Usage.CacheWriteTokens, u.Usage.CostUSD, boolInt(u.Priced), ms0(u.UpdatedAt))
	return translate(err, "record running usage of "+u.MissionID)
}

// UsageRunningDelete removes a mission's running spend (none: no error).
func (t *txn) UsageRunningDelete(ctx context.Context, missionID string) error {
	_, err := t.q.Exec(ctx, `DELETE FROM usage_running WHERE mission_id = $1`, missionID)
	return translate(err, "clear running usage of "+missionID)
}

// UsageRunningGet returns the running spend of a mission's attempt; ErrNotFound when none.
func (t *txn) UsageRunningGet(ctx context.Context, missionID string) (engine.RunningUsage, error) {
	u, err := scanRunningUsage(t.q.QueryRow(ctx, `SELECT `+usageRunningCols+` FROM usage_running WHERE mission_id = $1`, missionID))
	if errors.Is(err, pgx.ErrNoRows) {
		return u, fmt.Errorf("running usage of %s: %w", missionID, domain.ErrNotFound)
	}
	return u, translate(err, "running usage of "+missionID)
}

// UsageRunningList returns the running spend of every attempt in flight, by mission id.
func (t *txn) UsageRunningList(ctx context.Context) ([]engine.RunningUsage, error) {
	rows, err := t.q.Query(ctx, `SELECT `+usageRunningCols+` FROM usage_running ORDER BY mission_id`)
	if err != nil {
		return nil, translate(err, "running usage")
	}
	defer rows.Close()
	var out []engine.RunningUsage
	for rows.Next() {
		u, err := scanRunningUsage(rows)
		if err != nil {
			return nil, translate(err, "running usage")
		}
		out = append(out, u)
	}
	return out, translate(rows.Err(), "running usage")
}

// scanRunningUsage reads one row of usageRunningCols.
func scanRunningUsage(s rowScanner) (engine.RunningUsage, error) {
	var u engine.RunningUsage
	var priced int64
	var updated sql.NullInt64
	err := s.Scan(&u.MissionID, &u.Attempt, &u.Epoch, &u.VoyageID, &u.Profile, &u.Model, &u.Usage.InputTokens,
		&u.Usage.OutputTokens, &u.Usage.CacheReadTokens, &u.Usage.CacheWriteTokens, &u.Usage.CostUSD, &priced, &updated)
	u.Priced, u.UpdatedAt = priced != 0, fromMS(updated)
	return u, err
}

// SpendDayAdd adds u to what profile spent on day in one upsert that adds to the stored row
// (s.column + excluded.column), so that concurrent writers each add theirs: the conflicting
// row is locked by the upsert, and a serialization failure runs the whole Update again. The
// cost is rounded to 1e-9 dollars as in SQLite, so sums do not drift by float error.
func (t *txn) SpendDayAdd(ctx context.Context, profile, day string, u domain.Usage) error {
	_, err := t.q.Exec(ctx, `INSERT INTO spend_daily AS s (profile, day, input_tokens, output_tokens, cache_read_tokens,
 cache_write_tokens, cost_usd) VALUES ($1, $2, $3, $4, $5, $6, $7)
 ON CONFLICT (profile, day) DO UPDATE SET input_tokens = s.input_tokens + excluded.input_tokens,
   output_tokens = s.output_tokens + excluded.output_tokens,
   cache_read_tokens = s.cache_read_tokens + excluded.cache_read_tokens,
   cache_write_tokens = s.cache_write_tokens + excluded.cache_write_tokens,
   cost_usd = round((s.cost_usd + excluded.cost_usd) * 1e9::float8) / 1e9::float8`,
		profile, day, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CostUSD)
	return translate(err, "add the spend of profile "+profile+" on "+day)
}

// SpendDayGet returns what profile spent on day; zero usage when nothing.
func (t *txn) SpendDayGet(ctx context.Context, profile, day string) (domain.Usage, error) {
	var u domain.Usage
	err := t.q.QueryRow(ctx, `SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd
 FROM spend_daily WHERE profile = $1 AND day = $2`, profile, day).Scan(
		&u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &u.CostUSD)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Usage{}, nil
	}
	return u, translate(err, "spend of profile "+profile+" on "+day)
}

// SpendDayList returns what every profile spent on day, by profile name (empty: nothing).
func (t *txn) SpendDayList(ctx context.Context, day string) (map[string]domain.Usage, error) {
	rows, err := t.q.Query(ctx, `SELECT profile, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd
 FROM spend_daily WHERE day = $1 ORDER BY profile`, day)
	if err != nil {
		return nil, translate(err, "spend of "+day)
	}
	defer rows.Close()
	out := map[string]domain.Usage{}
	for rows.Next() {
		var p string
		var u domain.Usage
		if err := rows.Scan(&p, &u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &u.CostUSD); err != nil {
			return nil, translate(err, "spend of "+day)
		}
		out[p] = u
	}
	return out, translate(rows.Err(), "spend of "+day)
}
