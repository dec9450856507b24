package tools

import (
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// A database that cannot be reached (domain.ErrStoreUnavailable, however deeply wrapped) is
// answered as an isError result carrying the store's message, not as a protocol error; any
// other server fault stays a protocol error. So is a claim of a process that does not run
// its node (domain.ErrNotLeader).
func TestErrorResult_UnavailableDatabaseIsAToolError(t *testing.T) {
	down := fmt.Errorf("status: %w", fmt.Errorf("the database at postgres://u:xxxxx@h/db is not reachable yet: refused: %w", domain.ErrStoreUnavailable))
	res, err := errorResult("status", down)
	require.NoError(t, err)
	require.True(t, res.IsError)
	text := res.Content[0].(mcp.TextContent).Text
	require.Contains(t, text, "unavailable, try again later: ")
	require.Contains(t, text, "is not reachable yet: refused")

	notHere := fmt.Errorf("claim_mission: %w: this process does not run node n1 yet (another process holds its lease, or it is starting); claim from another node or retry shortly", domain.ErrNotLeader)
	res, err = errorResult("claim_mission", notHere)
	require.NoError(t, err, "a claim of a process that does not run its node is a tool error the agent can act on (trial: it was -32603)")
	require.True(t, res.IsError)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "claim from another node or retry shortly")

	res, err = errorResult("status", fmt.Errorf("disk on fire"))
	require.Nil(t, res)
	require.ErrorContains(t, err, "status: disk on fire")
}
