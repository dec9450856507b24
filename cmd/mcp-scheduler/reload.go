package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// reloadOnHangup re-reads the configuration file at every SIGHUP until ctx ends and puts its
// budget settings in force in s (docs/configuration.md, "Reloading budgets"): each profile's
// daily_cost_limit_usd and daily_token_limit, [scheduler] budget_day and [[prices]]. Other
// settings take effect at the next start.
func (a *app) reloadOnHangup(ctx context.Context, s *scheduler.Scheduler) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
				a.reloadBudgets(s)
			}
		}
	}()
}

// reloadBudgets is one reload: a file that does not load or does not validate is refused
// whole, with every problem logged, and the settings in use stay.
func (a *app) reloadBudgets(s *scheduler.Scheduler) {
	cfg, err := a.readConfig()
	if err != nil {
		a.log.Error("configuration reload refused: the budget settings in use stay; fix the file and send SIGHUP again",
			"config", a.cfg.path, "err", err)
		return
	}
	s.SetBudgets(cfg.budgets(), cfg.Prices)
	a.log.Info("configuration reloaded: the daily caps, budget_day and prices are in force; other settings take effect at the next start",
		"config", cfg.path)
}
