package main

import (
	"fmt"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// budgetDay is the time zone of [scheduler] budget_day (UTC when unset).
func (c *Config) budgetDay() (*time.Location, error) {
	switch c.Scheduler.BudgetDay {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return time.Local, nil
	}
	return time.LoadLocation(c.Scheduler.BudgetDay)
}

// budgets are the engine's budgets from the configuration: each profile's daily caps
// ([[profiles]] daily_cost_limit_usd, daily_token_limit) and the day they count.
func (c *Config) budgets() engine.Budgets {
	b := engine.Budgets{Profiles: map[string]engine.DailyBudget{}}
	b.Day, _ = c.budgetDay() // validate refused a bad zone before anything runs
	for _, p := range c.Profiles {
		if p.DailyCostLimitUSD > 0 || p.DailyTokenLimit > 0 {
			b.Profiles[p.Name] = engine.DailyBudget{CostUSD: p.DailyCostLimitUSD, Tokens: p.DailyTokenLimit}
		}
	}
	return b
}

// validateBudgets reports every problem of the budget settings, naming the key.
func (c *Config) validateBudgets() []error {
	errs := c.Prices.Validate()
	if _, err := c.budgetDay(); err != nil {
		errs = append(errs, fmt.Errorf("scheduler.budget_day: %q is not a time zone (%v): use UTC, Local or an IANA name such as Europe/Paris", c.Scheduler.BudgetDay, err))
	}
	for i, p := range c.Profiles {
		if p.DailyCostLimitUSD < 0 {
			errs = append(errs, fmt.Errorf("profiles[%d].daily_cost_limit_usd: %v must not be negative (0 or absent: no cap)", i, p.DailyCostLimitUSD))
		}
		if p.DailyTokenLimit < 0 {
			errs = append(errs, fmt.Errorf("profiles[%d].daily_token_limit: %d must not be negative (0 or absent: no cap)", i, p.DailyTokenLimit))
		}
	}
	return errs
}
