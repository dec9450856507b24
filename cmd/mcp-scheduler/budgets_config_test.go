package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Budget settings load into the engine's budgets and the scheduler's price table; every bad
// one is named with the file's other problems (an unknown key among them).
func TestConfig_BudgetsAndPrices(t *testing.T) {
	t.Parallel()
	body := `[scheduler]
budget_day = "Europe/Paris"

[[profiles]]
name = "claude"
runtime = "claude-code"
daily_cost_limit_usd = 5.0
daily_token_limit = 2000000

[[profiles]]
name = "free"
runtime = "claude-code"

[[prices]]
model = "*"
input = 3.0
output = 15.0
cache_read = 0.3
cache_write = 3.75
`
	c, err := loadConfig(writeConfig(t, body), true, envOf(map[string]string{"HOME": "/h"}))
	require.NoError(t, err)
	require.NoError(t, c.validate())
	b := c.budgets()
	require.Equal(t, map[string]engine.DailyBudget{"claude": {CostUSD: 5, Tokens: 2_000_000}}, b.Profiles)
	require.Equal(t, "Europe/Paris", b.Day.String())
	require.Equal(t, engine.Prices{{Model: "*", Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}, c.Prices)

	bad := `[scheduler]
budget_day = "Mars/Olympus"

[[profiles]]
name = "claude"
runtime = "claude-code"
daily_cost_limit_usd = -1
daily_token_limit = -5

[[prices]]
input = -3.0
cache_reads = 1.0

[[prices]]
model = "m"
[[prices]]
model = "m"
`
	c, err = loadConfig(writeConfig(t, bad), true, envOf(map[string]string{"HOME": "/h"}))
	require.NoError(t, err)
	err = c.validate()
	for _, want := range []string{`scheduler.budget_day: "Mars/Olympus" is not a time zone`,
		"profiles[0].daily_cost_limit_usd: -1 must not be negative", "profiles[0].daily_token_limit: -5 must not be negative",
		"prices[0].model: is empty", "prices[0].input: -3 must be a number of US dollars per million tokens",
		"unknown key prices.cache_reads", `prices[2].model: "m" has two entries`} {
		require.ErrorContains(t, err, want)
	}
}
