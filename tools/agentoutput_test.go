package tools

import (
	"testing"

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
