package engine

import (
	"fmt"
	"math"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Price is one model's price in US dollars per million tokens: uncached input, output, cache
// reads and cache writes (configuration [[prices]]). Model "*" is the price of every model
// without an entry of its own.
type Price struct {
	Model      string  `toml:"model" json:"model"`
	Input      float64 `toml:"input" json:"input"`
	Output     float64 `toml:"output" json:"output"`
	CacheRead  float64 `toml:"cache_read" json:"cache_read"`
	CacheWrite float64 `toml:"cache_write" json:"cache_write"`
}

// Prices is the price table that turns token counts into dollars where an agent reports
// none (Claude Code mid-run, Codex always).
type Prices []Price

// For returns the price of model: its own entry, else the "*" entry; false when neither.
func (p Prices) For(model string) (Price, bool) {
	var star *Price
	for i := range p {
		switch p[i].Model {
		case model:
			return p[i], true
		case "*":
			star = &p[i]
		}
	}
	if star != nil {
		return *star, true
	}
	return Price{}, false
}

// Cost prices u: the uncached input (input less its cache parts), output, cache reads and
// cache writes each at their own price, rounded to a nanodollar.
func (p Price) Cost(u domain.Usage) float64 {
	uncached := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	usd := (float64(uncached)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead + float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6
	return roundCost(usd)
}

// Price fills in u's cost from the table when the agent reported none; it returns u and
// whether it priced it (false: the agent's cost stands, or no price applies).
func (p Prices) Price(model string, u domain.Usage) (domain.Usage, bool) {
	if u.CostUSD > 0 || u.Tokens() == 0 {
		return u, false
	}
	pr, ok := p.For(model)
	if !ok {
		return u, false
	}
	u.CostUSD = pr.Cost(u)
	return u, true
}

// Validate reports every problem of the table, naming the entry (prices[i]) and field.
func (p Prices) Validate() []error {
	var errs []error
	seen := map[string]bool{}
	for i, pr := range p {
		key := fmt.Sprintf("prices[%d]", i)
		if pr.Model == "" {
			errs = append(errs, fmt.Errorf("%s.model: is empty: name the model as the agent runs it, or \"*\" for every other model", key))
		}
		if seen[pr.Model] {
			errs = append(errs, fmt.Errorf("%s.model: %q has two entries", key, pr.Model))
		}
		seen[pr.Model] = true
		for _, f := range []struct {
			name string
			v    float64
		}{{"input", pr.Input}, {"output", pr.Output}, {"cache_read", pr.CacheRead}, {"cache_write", pr.CacheWrite}} {
			if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				errs = append(errs, fmt.Errorf("%s.%s: %v must be a number of US dollars per million tokens, zero or more", key, f.name, f.v))
			}
		}
	}
	return errs
}
