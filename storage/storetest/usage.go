package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseUsage covers UsageRunningPut, UsageRunningGet, UsageRunningList,
// UsageRunningDelete, SpendDayAdd, SpendDayGet and SpendDayList (hard budgets).
func exerciseUsage(t *testing.T, open Opener) {
	group(t, "UsageRunningPut", func(t *testing.T) {
		run(t, "InsertsThenReplacesEveryField", open, func(t *testing.T, e *env) {
			e.add("m1")
			u := &engine.RunningUsage{MissionID: "m1", Attempt: 1, Epoch: 3, VoyageID: "v1", Profile: "claude", Model: "sonnet",
				Usage:  domain.Usage{InputTokens: 1200, OutputTokens: 30, CacheReadTokens: 1000, CacheWriteTokens: 100, CostUSD: 0.0125},
				Priced: true, UpdatedAt: e.next()}
			e.update(func(tx engine.Tx) error { return tx.UsageRunningPut(e.ctx, u) })
			require.Equal(t, *u, runningGet(e, "m1"))
			u2 := &engine.RunningUsage{MissionID: "m1", Attempt: 2, Epoch: 4, Profile: "codex",
				Usage: domain.Usage{InputTokens: 5, OutputTokens: 1}, UpdatedAt: e.next()}
			e.update(func(tx engine.Tx) error { return tx.UsageRunningPut(e.ctx, u2) })
			require.Equal(t, *u2, runningGet(e, "m1"), "the report replaces the previous one: it is cumulative")
		})
		run(t, "GoesWithItsMission", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.update(func(tx engine.Tx) error {
				return tx.UsageRunningPut(e.ctx, &engine.RunningUsage{MissionID: "m1", Attempt: 1, Epoch: 1, UpdatedAt: e.next()})
			})
			e.update(func(tx engine.Tx) error { return tx.MissionDelete(e.ctx, "m1") })
			require.Empty(t, runningList(e))
		})
	})
	group(t, "UsageRunningGet", func(t *testing.T) {
		run(t, "NoneReported", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.view(func(r engine.Reader) error {
				_, err := r.UsageRunningGet(e.ctx, "m1")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
	})
	group(t, "UsageRunningList", func(t *testing.T) {
		run(t, "EveryAttemptInFlightByMission", open, func(t *testing.T, e *env) {
			e.add("m2")
			e.add("m1")
			for _, id := range []string{"m2", "m1"} {
				e.update(func(tx engine.Tx) error {
					return tx.UsageRunningPut(e.ctx, &engine.RunningUsage{MissionID: id, Attempt: 1, Epoch: 1,
						Usage: domain.Usage{InputTokens: 7}, UpdatedAt: e.next()})
				})
			}
			var ids []string
			for _, u := range runningList(e) {
				ids = append(ids, u.MissionID)
				require.Equal(t, int64(7), u.Usage.InputTokens)
			}
			require.Equal(t, []string{"m1", "m2"}, ids)
		})
	})
	group(t, "UsageRunningDelete", func(t *testing.T) {
		run(t, "RemovesAndIgnoresAbsent", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.update(func(tx engine.Tx) error {
				return tx.UsageRunningPut(e.ctx, &engine.RunningUsage{MissionID: "m1", Attempt: 1, Epoch: 1, UpdatedAt: e.next()})
			})
			e.update(func(tx engine.Tx) error {
				if err := tx.UsageRunningDelete(e.ctx, "m1"); err != nil {
					return err
				}
				return tx.UsageRunningDelete(e.ctx, "m1")
			})
			require.Empty(t, runningList(e))
		})
	})
	group(t, "SpendDayAdd", func(t *testing.T) {
		run(t, "SumsPerProfileAndDay", open, func(t *testing.T, e *env) {
			add := func(profile, day string, u domain.Usage) {
				e.update(func(tx engine.Tx) error { return tx.SpendDayAdd(e.ctx, profile, day, u) })
			}
			add("claude", "2026-12-01", domain.Usage{InputTokens: 100, OutputTokens: 10, CacheReadTokens: 60, CacheWriteTokens: 5, CostUSD: 0.0016})
			add("claude", "2026-12-01", domain.Usage{InputTokens: 50, OutputTokens: 5, CacheReadTokens: 1, CostUSD: 0.0008})
			add("claude", "2026-12-02", domain.Usage{InputTokens: 1})
			add("codex", "2026-12-01", domain.Usage{OutputTokens: 2})
			require.Equal(t, domain.Usage{InputTokens: 150, OutputTokens: 15, CacheReadTokens: 61, CacheWriteTokens: 5, CostUSD: 0.0024},
				spendGet(e, "claude", "2026-12-01"), "sums keep the nanodollar")
			require.Equal(t, domain.Usage{InputTokens: 1}, spendGet(e, "claude", "2026-12-02"))
			require.Equal(t, domain.Usage{OutputTokens: 2}, spendGet(e, "codex", "2026-12-01"))
		})
	})
	group(t, "SpendDayList", func(t *testing.T) {
		run(t, "EveryProfileOfTheDay", open, func(t *testing.T, e *env) {
			add := func(profile, day string, u domain.Usage) {
				e.update(func(tx engine.Tx) error { return tx.SpendDayAdd(e.ctx, profile, day, u) })
			}
			add("claude", "2026-12-01", domain.Usage{InputTokens: 100, OutputTokens: 10, CacheReadTokens: 60, CacheWriteTokens: 5, CostUSD: 0.0016})
			add("claude", "2026-12-01", domain.Usage{InputTokens: 50, CostUSD: 0.0008})
			add("codex", "2026-12-01", domain.Usage{OutputTokens: 2})
			add("claude", "2026-12-02", domain.Usage{InputTokens: 1})
			require.Equal(t, map[string]domain.Usage{
				"claude": {InputTokens: 150, OutputTokens: 10, CacheReadTokens: 60, CacheWriteTokens: 5, CostUSD: 0.0024},
				"codex":  {OutputTokens: 2},
			}, spendList(e, "2026-12-01"))
			require.Equal(t, map[string]domain.Usage{"claude": {InputTokens: 1}}, spendList(e, "2026-12-02"))
		})
		run(t, "NothingSpentIsEmpty", open, func(t *testing.T, e *env) {
			require.Empty(t, spendList(e, "2026-12-01"))
		})
	})
	group(t, "SpendDayGet", func(t *testing.T) {
		run(t, "NothingSpentIsZero", open, func(t *testing.T, e *env) {
			require.Equal(t, domain.Usage{}, spendGet(e, "claude", "2026-12-01"))
		})
	})
}

func runningGet(e *env, id string) engine.RunningUsage {
	e.t.Helper()
	var u engine.RunningUsage
	e.view(func(r engine.Reader) error {
		var err error
		u, err = r.UsageRunningGet(e.ctx, id)
		return err
	})
	return u
}

func runningList(e *env) []engine.RunningUsage {
	e.t.Helper()
	var out []engine.RunningUsage
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.UsageRunningList(e.ctx)
		return err
	})
	return out
}

func spendGet(e *env, profile, day string) domain.Usage {
	e.t.Helper()
	var u domain.Usage
	e.view(func(r engine.Reader) error {
		var err error
		u, err = r.SpendDayGet(e.ctx, profile, day)
		return err
	})
	return u
}

func spendList(e *env, day string) map[string]domain.Usage {
	e.t.Helper()
	var out map[string]domain.Usage
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.SpendDayList(e.ctx, day)
		return err
	})
	return out
}
