package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// rateState is what a decoder learned of the provider's usage window during one attempt:
// the last window it reported (task.rate_limit), how many rate-limit events it could not
// read (absent or unknown status, a rate_limit_info that is no object: counted, logged,
// never fatal), and the clock and zone that place a reset written in words.
type rateState struct {
	last      *agent.RateLimit
	malformed int
	now       func() time.Time
	loc       *time.Location
}

func newRateState() rateState { return rateState{now: time.Now, loc: time.Local} }

// claudeRateInfo is rate_limit_event's rate_limit_info as seen in the field
// (`{"status":"rejected","resetsAt":1778565600,"rateLimitType":"five_hour",…}`); other
// members are ignored. ResetsAt is raw: Unix seconds, tolerated as milliseconds or a string.
type claudeRateInfo struct {
	Status        string          `json:"status"`
	ResetsAt      json.RawMessage `json:"resetsAt"`
	RateLimitType string          `json:"rateLimitType"`
}

// rateLimitEvent maps a rate_limit_event: a task.rate_limit with what it says, or a warning
// (counted) when the event carries no status this protocol knows.
func (d *claudeDecoder) rateLimitEvent(raw json.RawMessage) []agent.Message {
	var info claudeRateInfo
	if len(bytes.TrimSpace(raw)) == 0 || raw[0] != '{' || json.Unmarshal(raw, &info) != nil {
		return d.rate.bad("a rate_limit_event without a readable rate_limit_info object")
	}
	if !agent.KnownRateStatus(info.Status) {
		return d.rate.bad(fmt.Sprintf("a rate_limit_event with status %q (want allowed, allowed_warning or rejected)", clipRunes(info.Status, 40)))
	}
	rl := agent.RateLimit{Status: info.Status, LimitType: info.RateLimitType, ResetsAt: unixish(info.ResetsAt)}
	return d.rate.report(rl, "claude-code")
}

// retryRateLimit reads an api_retry that a 429 caused: the CLI waits retry_delay_ms (its
// reading of the provider's retry-after) before it tries again, so the window is rejected
// for at least that long.
func (d *claudeDecoder) retryRateLimit(ev *claudeEvent) []agent.Message {
	if !claudeRateLimited(ev.ErrorStatus, "", ev.Error) {
		return nil
	}
	rl := agent.RateLimit{Status: agent.RateRejected, RetryAfterSeconds: float64(max(ev.RetryDelayMs, 0)) / 1000}
	return d.rate.report(rl, "claude-code")
}

// claudeRateLimited reports whether an API error is the provider's rate limit: HTTP 429,
// error type rate_limit_error, or Claude Code's own error name rate_limit (seen with
// 2.1.332) or usage_limit_reached.
func claudeRateLimited(status *int, errType, errName string) bool {
	return (status != nil && *status == 429) || errType == "rate_limit_error" ||
		errName == "rate_limit" || errName == "usage_limit_reached"
}

// hitLimitText reports whether a result's text is Claude Code's exhausted-window message
// ("You've hit your limit · resets 2pm (Asia/Shanghai)"; older versions: "usage limit
// reached … resets …").
func hitLimitText(s string) bool {
	l := strings.ToLower(strings.ReplaceAll(s, "’", "'"))
	return strings.Contains(l, "you've hit your limit") || strings.Contains(l, "usage limit reached") ||
		strings.Contains(l, "hit your usage limit")
}

// finalRateLimit is the task.rate_limit sent before a rate_limit failure: rejected, with the
// reset a rejected event reported, else the one the text names, else none (the scheduler
// backs off).
func (r *rateState) finalRateLimit(text, who string) []agent.Message {
	rl := agent.RateLimit{Status: agent.RateRejected}
	if l := r.last; l != nil && l.Status == agent.RateRejected && !l.ResetsAt.IsZero() {
		rl.ResetsAt, rl.LimitType = l.ResetsAt, l.LimitType // an event's Unix time is exact
	} else if t, ok := parseResetClock(text, r.loc, r.now()); ok {
		rl.ResetsAt = t
	}
	if r.last != nil && rl.LimitType == "" {
		rl.LimitType = r.last.LimitType
	}
	return r.report(rl, who)
}

// report remembers rl and returns it as task.rate_limit, with a log line for people; nothing
// when it says what the last report said (Codex repeats the message in turn.failed).
func (r *rateState) report(rl agent.RateLimit, who string) []agent.Message {
	if r.last != nil && *r.last == rl {
		return nil
	}
	r.last = &rl
	what := rl.Status
	if rl.LimitType != "" {
		what += " (" + rl.LimitType + ")"
	}
	switch {
	case !rl.ResetsAt.IsZero():
		what += ", resets " + rl.ResetsAt.UTC().Format(time.RFC3339)
	case rl.RetryAfterSeconds > 0:
		what += fmt.Sprintf(", retry after %.0f s", rl.RetryAfterSeconds)
	case rl.Status == agent.RateRejected:
		what += ", reset time unknown"
	}
	level := "info"
	if rl.Status != agent.RateAllowed {
		level = "warn"
	}
	return []agent.Message{{Type: agent.TypeRateLimit, RateLimit: &rl}, logMsg(level, who+": rate-limit window "+what)}
}

// bad counts an event it could not read and says so.
func (r *rateState) bad(why string) []agent.Message {
	r.malformed++
	return []agent.Message{logMsg("warn", fmt.Sprintf("%s ignored (%d so far this attempt)", why, r.malformed))}
}

// unixish reads a reset time given as Unix seconds (a number or a string of digits), or as
// milliseconds when the number is too large for seconds; zero when absent or unreadable.
func unixish(raw json.RawMessage) time.Time {
	s := strings.Trim(string(bytes.TrimSpace(raw)), `"`)
	if s == "" || s == "null" {
		return time.Time{}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t
		}
		return time.Time{}
	}
	if f > 1e12 {
		return time.UnixMilli(int64(f)).UTC()
	}
	return time.Unix(int64(f), 0).UTC()
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
