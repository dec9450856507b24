package tools

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// The log screen's copies of the protocol's type names are the protocol's (a test may import
// agent; the package may not).
func TestReadableLines_KnowsTheProtocolTypes(t *testing.T) {
	require.Equal(t, agent.TypeHeartbeat, outHeartbeat)
	require.Equal(t, agent.TypePing, outPing)
	require.Equal(t, agent.TypeProgress, outProgress)
	require.Equal(t, agent.TypeLog, outLog)
	require.Equal(t, agent.TypeCheckpoint, outCheckpoint)
	require.Equal(t, agent.TypeResult, outResult)
}

// The agent protocol's usage, yield and rate-limit reports read as sentences, not as the
// JSON lines they are on the wire (written here by the protocol's own types).
func TestReadableLines_UsageYieldAndRateLimit(t *testing.T) {
	line := func(m agent.Message) string {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return string(b)
	}
	resets := time.Date(2026, 5, 12, 14, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		msg  agent.Message
		want string
	}{
		{agent.UsageMessage(agent.Usage{InputTokens: 1000, OutputTokens: 100, CostUSD: 0.5}), "usage so far: 1000 tokens in, 100 out, $0.5000"},
		{agent.UsageMessage(agent.Usage{InputTokens: 7, OutputTokens: 3}), "usage so far: 7 tokens in, 3 out"},
		{agent.Message{Type: agent.TypeYield, Reason: "preempted", Message: "an urgent mission needs the slot"}, "yielded (preempted): an urgent mission needs the slot"},
		{agent.Message{Type: agent.TypeRateLimit, RateLimit: &agent.RateLimit{Status: agent.RateRejected, LimitType: "five_hour", ResetsAt: resets}},
			"rate limit rejected (five_hour), resets 2026-05-12T14:00:00Z"},
		{agent.Message{Type: agent.TypeRateLimit, RateLimit: &agent.RateLimit{Status: agent.RateAllowed}}, "rate limit allowed"},
	} {
		require.Equal(t, []string{c.want}, ReadableLines(line(c.msg)), line(c.msg))
	}
	require.Equal(t, agent.TypeYield, outYield)
	require.Equal(t, agent.TypeUsage, outUsage)
	require.Equal(t, agent.TypeRateLimit, outRateLimit)
}
