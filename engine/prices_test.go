package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The price table: an exact model beats "*", uncached input is input less its cache parts,
// an agent's own cost stands, and a model without a price stays in tokens.
func TestPrices_Price(t *testing.T) {
	t.Parallel()
	p := engine.Prices{{Model: "*", Input: 1, Output: 2, CacheRead: 0.1, CacheWrite: 1.25}, {Model: "gpt-5.5", Input: 10}}
	u, priced := p.Price("sonnet", domain.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000, CacheReadTokens: 400_000, CacheWriteTokens: 100_000})
	require.True(t, priced)
	require.InDelta(t, 0.5+2+0.04+0.125, u.CostUSD, 1e-9)
	u, _ = p.Price("gpt-5.5", domain.Usage{InputTokens: 1_000_000})
	require.InDelta(t, 10.0, u.CostUSD, 1e-9)
	u, priced = p.Price("sonnet", domain.Usage{InputTokens: 10, CostUSD: 0.5})
	require.False(t, priced, "the agent's own cost stands")
	require.Equal(t, 0.5, u.CostUSD)
	_, priced = engine.Prices{{Model: "x", Input: 1}}.Price("y", domain.Usage{InputTokens: 10})
	require.False(t, priced, "no price, no dollars")
}
