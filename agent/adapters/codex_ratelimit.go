package adapters

import (
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// codexRateWords mark a Codex error message as the provider's rate limit, matched in its
// lower-cased text. Codex 0.171.0 in exec --json emits no rate-limit event of its own (the
// x-codex-* headers and a usage_limit_reached body show only in the message text):
// "You’ve hit your usage limit. … try again at 6:16 PM." and, for a plain 429,
// "exceeded retry limit, last status: 429 Too Many Requests" (docs/agents.md).
var codexRateWords = []string{"hit your usage limit", "usage limit has been reached", "usage_limit_reached",
	"rate limit reached", "rate_limit_exceeded", "rate limit exceeded"}

// codexRateLimited reports whether a Codex error message (lower-cased) says in words that
// the provider's rate limit was hit. A bare 429 counts too, unless the text says quota
// (codexFailureKind: OpenAI's insufficient_quota is a 429 that waiting does not cure).
func codexRateLimited(m string) bool {
	return containsAny(strings.ReplaceAll(m, "’", "'"), codexRateWords)
}

// rateMessages is the task.rate_limit for an error or turn.failed message that is a rate
// limit (nil for any other): rejected, with the reset the text names ("try again at …", in
// the zone Codex printed in, ours) when it names one.
func (d *codexDecoder) rateMessages(msg string) []agent.Message {
	if codexFailureKind(msg) != agent.KindRateLimit {
		return nil
	}
	return d.rate.finalRateLimit(msg, "codex")
}
