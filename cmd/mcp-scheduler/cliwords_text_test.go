package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The engine's sentences come out as command lines: a tool with one of its fields becomes the
// command with its argument (the id shown, when known) and flag; a tool whose field the command
// has no flag for keeps its name; quoted text stays as typed.
func TestCLIText_SentencesNameCommands(t *testing.T) {
	m, v := domain.PrefixMission+"_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D", domain.PrefixVoyage+"_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"
	mission := engine.Breach{Scope: engine.ScopeMission, Subject: m, Measure: engine.MeasureCost, Spent: 1, Limit: 1}
	voyage := engine.Breach{Scope: engine.ScopeVoyage, Subject: v, Measure: engine.MeasureToken, Spent: 10, Limit: 10}
	for _, c := range []struct{ in, want string }{
		{mission.HoldMessage(), "(mcp-scheduler missions update " + m + " --cost-limit-usd)"},
		{voyage.HoldMessage(), "(mcp-scheduler voyages update " + v + " --token-limit)"},
		{"resolve_escalation with action retry once fixed", "mcp-scheduler escalations resolve ESCALATION_ID --action retry once fixed"},
		{"the scheduler is paused (resume_scheduler)", "the scheduler is paused (mcp-scheduler resume)"},
		{"retry_mission first", "mcp-scheduler missions retry first"},
		{"raise it (update_mission or update_voyage cost_limit_usd)", "raise it (mcp-scheduler missions update or mcp-scheduler voyages update " + v + " --cost-limit-usd)"},
		{"settle it (update_voyage requirements_changed=false)", "settle it (update_voyage requirements_changed=false)"},
		{"approve_landing " + m + " (get_mission_diff shows it)", "approve_landing " + m + " (get_mission_diff shows it)"},
		{`"list_missions" is not a mission id`, `"list_missions" is not a mission id`},
	} {
		require.Contains(t, cliText(c.in, m, v), c.want, c.in)
	}
}
