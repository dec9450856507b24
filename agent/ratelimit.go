package agent

import "time"

// TypeRateLimit is task.rate_limit (agent → scheduler, protocol version 1, additive): what the
// agent learned of its model provider's usage window. A rejected window pauses the agent's
// profile (or its limit_group) until the reset; allowed_warning lowers the profile's
// concurrency; allowed clears either. Agents that never send it keep working as before.
const TypeRateLimit = "task.rate_limit"

// Rate-limit statuses of task.rate_limit.
const (
	RateAllowed  = "allowed"         // the window has room
	RateWarning  = "allowed_warning" // the window is close to exhausted
	RateRejected = "rejected"        // the window is exhausted: requests are refused until it resets
)

// KindRateLimit is the failure kind of an attempt that ended because its provider's usage
// window was exhausted (HTTP 429, "You've hit your limit"). It spends no retry budget: the
// mission waits for the profile's window to reset and runs again.
const KindRateLimit = "rate_limit"

// RateLimit is the body of task.rate_limit. Status is one of the Rate constants and the
// only required field; ResetsAt is when the window resets (RFC 3339 on the wire; zero when
// unknown), LimitType names the window ("five_hour", "seven_day", "requests" …), and
// RetryAfterSeconds is the provider's retry-after hint (0: none). With neither a reset nor a
// hint the scheduler backs off exponentially (docs/agents.md, "Rate-limit windows").
type RateLimit struct {
	Status            string    `json:"status"`
	ResetsAt          time.Time `json:"resets_at,omitzero"`
	LimitType         string    `json:"limit_type,omitempty"`
	RetryAfterSeconds float64   `json:"retry_after_seconds,omitempty"`
}

// KnownRateStatus reports whether s is one of the statuses of task.rate_limit.
func KnownRateStatus(s string) bool {
	return s == RateAllowed || s == RateWarning || s == RateRejected
}
