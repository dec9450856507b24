package watch

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// The log screen's copies of the protocol's type names are the protocol's (a test may import
// agent; the package may not).
func TestReadableLines_KnowsTheProtocolTypes(t *testing.T) {
	require.Equal(t, agent.TypeHeartbeat, typeHeartbeat)
	require.Equal(t, agent.TypePing, typePing)
	require.Equal(t, agent.TypeProgress, typeProgress)
	require.Equal(t, agent.TypeLog, typeLog)
	require.Equal(t, agent.TypeCheckpoint, typeCheckpoint)
	require.Equal(t, agent.TypeResult, typeResult)
}
