package dashboard

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Every mission state is counted in exactly one badge group.
func TestBadges_EveryStateInOneGroup(t *testing.T) {
	seen := map[domain.MissionState]string{}
	for _, g := range badgeGroups {
		for _, s := range g.states {
			require.Empty(t, seen[s], "%s is in %s and %s", s, seen[s], g.key)
			seen[s] = g.key
		}
	}
	for _, s := range domain.AllStates() {
		require.NotEmpty(t, seen[s], "state %s is in no badge group", s)
	}
	require.Len(t, seen, len(domain.AllStates()))
}
