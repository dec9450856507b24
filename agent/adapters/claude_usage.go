package adapters

import (
	"encoding/json"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// claudeUsageTracker sums the token counts Claude Code streams before its result. Claude Code
// repeats one API message's usage on every assistant event of that message (one event per
// content block, the same message.id), so each message id counts once: the largest count seen
// for it per field (a later event of the same message never reports less). Claude Code gives
// dollars only in its result event; the scheduler prices the streamed counts with its price
// table (docs/configuration.md, [[prices]]).
type claudeUsageTracker struct {
	byID  map[string]agent.Usage
	order []string // message ids, first seen first
	last  agent.Usage
}

// claudeAssistantUsage is the part of an assistant event's message that carries usage.
type claudeAssistantUsage struct {
	ID    string       `json:"id"`
	Model string       `json:"model"`
	Usage *claudeUsage `json:"usage"`
}

// observe reads an assistant event's message and returns a task.usage message when the
// cumulative usage changed (nothing for a repeated message, one without an id or usage, or a
// synthetic one: "<synthetic>" messages are made up by Claude Code, not billed).
func (t *claudeUsageTracker) observe(raw json.RawMessage) []agent.Message {
	var m claudeAssistantUsage
	if json.Unmarshal(raw, &m) != nil || m.ID == "" || m.Usage == nil || m.Model == "<synthetic>" {
		return nil
	}
	if t.byID == nil {
		t.byID = map[string]agent.Usage{}
	}
	u := claudeTokens(m.Usage)
	prev, seen := t.byID[m.ID]
	if !seen {
		t.order = append(t.order, m.ID)
	}
	t.byID[m.ID] = maxUsage(prev, u)
	sum := t.total()
	if sum == t.last {
		return nil
	}
	t.last = sum
	return []agent.Message{agent.UsageMessage(sum)}
}

// total is the sum over every message seen.
func (t *claudeUsageTracker) total() agent.Usage {
	var s agent.Usage
	for _, id := range t.order {
		u := t.byID[id]
		s.InputTokens += u.InputTokens
		s.OutputTokens += u.OutputTokens
		s.CacheReadTokens += u.CacheReadTokens
		s.CacheWriteTokens += u.CacheWriteTokens
	}
	return s
}

// claudeTokens reads one usage object: input counts every input token (uncached, cache writes
// and cache reads), with the cache parts kept apart for pricing.
func claudeTokens(x *claudeUsage) agent.Usage {
	clamp := func(n int64) int64 { return max(n, 0) } // a negative count is noise, not a refund
	u := agent.Usage{OutputTokens: clamp(x.OutputTokens), CacheReadTokens: clamp(x.CacheReadInputTokens),
		CacheWriteTokens: clamp(x.CacheCreationInputTokens)}
	u.InputTokens = clamp(x.InputTokens) + u.CacheReadTokens + u.CacheWriteTokens
	return u
}

func maxUsage(a, b agent.Usage) agent.Usage {
	return agent.Usage{InputTokens: max(a.InputTokens, b.InputTokens), OutputTokens: max(a.OutputTokens, b.OutputTokens),
		CacheReadTokens: max(a.CacheReadTokens, b.CacheReadTokens), CacheWriteTokens: max(a.CacheWriteTokens, b.CacheWriteTokens),
		CostUSD: max(a.CostUSD, b.CostUSD)}
}
