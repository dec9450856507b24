package storage

import (
	"context"
	"database/sql"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Budgets: the running spend of attempts in flight (usage_running) and what each profile
// spent per day (spend_daily), schema 14.

const usageRunningCols = `mission_id, attempt, epoch, voyage_id, profile, model, input_tokens, output_tokens,
 cache_read_tokens, cache_write_tokens, cost_usd, priced, updated_at`

func (t *txn) UsageRunningPut(ctx context.Context, u *engine.RunningUsage) error {
	_, err := t.q.exec(ctx, `INSERT INTO usage_running (`+usageRunningCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
 ON CONFLICT (mission_id) DO UPDATE SET attempt = excluded.attempt, epoch = excluded.epoch, voyage_id = excluded.voyage_id,
   profile = excluded.profile, model = excluded.model, input_tokens = excluded.input_tokens,
   output_tokens = excluded.output_tokens, cache_read_tokens = excluded.cache_read_tokens,
   cache_write_tokens = excluded.cache_write_tokens, cost_usd = excluded.cost_usd,
   priced = excluded.priced, updated_at = excluded.updated_at`,
		u.MissionID, u.Attempt, u.Epoch, u.VoyageID, u.Profile, u.Model, u.Usage.InputTokens, u.Usage.OutputTokens,
		u.Usage.CacheReadTokens, u.Usage.CacheWriteTokens, u.Usage.CostUSD, boolInt(u.Priced), ms0(u.UpdatedAt))
	return translate(err, "record running usage of "+u.MissionID)
}

func (t *txn) UsageRunningDelete(ctx context.Context, missionID string) error {
	_, err := t.q.exec(ctx, `DELETE FROM usage_running WHERE mission_id = ?`, missionID)
	return translate(err, "clear running usage of "+missionID)
}

func (t *txn) UsageRunningGet(ctx context.Context, missionID string) (engine.RunningUsage, error) {
	u, err := scanRunningUsage(t.q.queryRow(ctx, `SELECT `+usageRunningCols+` FROM usage_running WHERE mission_id = ?`, missionID))
	if err == sql.ErrNoRows {
		return u, domain.ErrNotFound
	}
	return u, translate(err, "running usage of "+missionID)
}

func (t *txn) UsageRunningList(ctx context.Context) ([]engine.RunningUsage, error) {
	rows, err := t.q.query(ctx, `SELECT `+usageRunningCols+` FROM usage_running ORDER BY mission_id`)
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

func scanRunningUsage(s interface{ Scan(...any) error }) (engine.RunningUsage, error) {
	var u engine.RunningUsage
	var priced int
	var updated sql.NullInt64
	err := s.Scan(&u.MissionID, &u.Attempt, &u.Epoch, &u.VoyageID, &u.Profile, &u.Model, &u.Usage.InputTokens,
		&u.Usage.OutputTokens, &u.Usage.CacheReadTokens, &u.Usage.CacheWriteTokens, &u.Usage.CostUSD, &priced, &updated)
	u.Priced, u.UpdatedAt = priced != 0, fromMS(updated)
	return u, err
}

func (t *txn) SpendDayAdd(ctx context.Context, profile, day string, u domain.Usage) error {
	_, err := t.q.exec(ctx, `INSERT INTO spend_daily (profile, day, input_tokens, output_tokens, cache_read_tokens,
 cache_write_tokens, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?)
 ON CONFLICT (profile, day) DO UPDATE SET input_tokens = input_tokens + excluded.input_tokens,
   output_tokens = output_tokens + excluded.output_tokens,
   cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
   cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
   cost_usd = round((cost_usd + excluded.cost_usd) * 1e9) / 1e9`,
		profile, day, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CostUSD)
	return translate(err, "add the spend of profile "+profile+" on "+day)
}

func (t *txn) SpendDayGet(ctx context.Context, profile, day string) (domain.Usage, error) {
	var u domain.Usage
	err := t.q.queryRow(ctx, `SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd
 FROM spend_daily WHERE profile = ? AND day = ?`, profile, day).Scan(
		&u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &u.CostUSD)
	if err == sql.ErrNoRows {
		return domain.Usage{}, nil
	}
	return u, translate(err, "spend of profile "+profile+" on "+day)
}

// SpendDayList reads every profile's row of one day: a scan of spend_daily, whose rows are
// one per profile and day (it grows with days, not with history of missions).
func (t *txn) SpendDayList(ctx context.Context, day string) (map[string]domain.Usage, error) {
	rows, err := t.q.query(ctx, `SELECT profile, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd
 FROM spend_daily WHERE day = ? ORDER BY profile`, day)
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
