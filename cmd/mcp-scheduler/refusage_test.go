package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The README's way to try budgets without an API key: the reference agent's @usage reports
// $0.50 against a $0.25 limit, and the mission blocks with a budget escalation.
func TestReadme_ReferenceAgentUsageTriesABudget(t *testing.T) {
	s := newSandbox(t)
	startReloadDaemon(t, s, reloadConfig("0"))
	m := cliJSON[domain.Mission](s, "go", "spend", "--brief", "@usage 1000 100 0.50\n@done", "--cost-limit-usd", "0.25")
	testenv.WaitFor(t, "the mission to block on its budget", func() bool {
		return cliJSON[engine.MissionDetail](s, "missions", "show", m.ID).Mission.State == domain.StateBlocked
	})
	d := cliJSON[engine.MissionDetail](s, "missions", "show", m.ID)
	require.NotNil(t, d.Escalation)
	require.Equal(t, "budget", d.Escalation.Kind)
	require.InDelta(t, 0.5, d.Mission.Usage.CostUSD, 1e-9)
}
