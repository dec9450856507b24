package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// `go` sets a mission's hard budgets, dollars and tokens, and `missions show` reads them
// back; a negative one is refused naming the field, and creates nothing.
func TestCLI_GoSetsTheBudgets(t *testing.T) {
	s := newSandbox(t)
	m := cliJSON[domain.Mission](s, "go", "Bounded", "--cost-limit-usd", "0.5", "--token-limit", "200000")
	require.Equal(t, 0.5, m.CostLimitUSD)
	det := cliJSON[engine.MissionDetail](s, "missions", "show", m.ID)
	require.Equal(t, int64(200_000), det.TokenLimit)

	_, errs, code := s.cli("go", "x", "--token-limit", "-1")
	require.Equal(t, 2, code, "a usage mistake")
	require.Contains(t, errs, "--token-limit: is negative", "the flag, not the tool field, is named")
	list := cliJSON[[]domain.Mission](s, "missions", "list")
	require.Len(t, list, 1, "nothing created")
}
