package adapters

import "github.com/mcp-scheduler/mcp-scheduler/agent"

// codexUsageTracker sums the usage of the turns one `codex exec` process ran. Codex reports
// usage only in turn.completed, summed over the model requests of that turn (agent-clis.md §4),
// so the attempt's cumulative spend is the sum over its turns. Codex gives no dollars; the
// scheduler prices the tokens with its price table (docs/configuration.md, [[prices]]).
type codexUsageTracker struct {
	sum agent.Usage
}

// turn adds one turn.completed's usage (nil: the turn reported none) and returns the
// cumulative task.usage report the scheduler checks the budgets on before it reads the
// turn's result (nothing when the turn reported no usage object).
func (t *codexUsageTracker) turn(u *codexUsage) []agent.Message {
	if u == nil {
		return nil
	}
	x := codexTokens(u)
	t.sum.InputTokens += x.InputTokens
	t.sum.OutputTokens += x.OutputTokens
	t.sum.CacheReadTokens += x.CacheReadTokens
	return []agent.Message{agent.UsageMessage(t.sum)}
}

// codexTokens reads one turn's usage object: input counts every input token, cached ones
// included (cached_input_tokens is the part of it read from the cache, never more than it);
// a negative count is noise, not a refund.
func codexTokens(u *codexUsage) agent.Usage {
	in := max(u.InputTokens, 0)
	return agent.Usage{InputTokens: in, OutputTokens: max(u.OutputTokens, 0),
		CacheReadTokens: min(max(u.CachedInputTokens, 0), in)}
}
