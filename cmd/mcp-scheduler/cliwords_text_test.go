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
	t.Parallel()
	m, v := domain.PrefixMission+"_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D", domain.PrefixVoyage+"_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"
	e := domain.PrefixEscalation + "_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"
	mission := engine.Breach{Scope: engine.ScopeMission, Subject: m, Measure: engine.MeasureCost, Spent: 1, Limit: 1}
	voyage := engine.Breach{Scope: engine.ScopeVoyage, Subject: v, Measure: engine.MeasureToken, Spent: 10, Limit: 10}
	for _, c := range []struct{ in, want string }{
		{mission.HoldMessage(), "(mcp-scheduler missions update " + m + " --cost-limit-usd)"},
		{voyage.HoldMessage(), "(mcp-scheduler voyages update " + v + " --token-limit)"},
		{"resolve_escalation with action retry once fixed", "mcp-scheduler escalations resolve " + e + " --action retry once fixed"},
		{"the scheduler is paused (resume_scheduler)", "the scheduler is paused (mcp-scheduler resume)"},
		{"retry_mission first", "mcp-scheduler missions retry " + m + " first"},
		{"raise it (update_mission or update_voyage cost_limit_usd)", "raise it (mcp-scheduler missions update " + m + " or mcp-scheduler voyages update " + v + " --cost-limit-usd)"},
		{"the mission's (update_mission), or cancel", "the mission's (mcp-scheduler missions update " + m + "), or cancel"},
		{"get_mission " + m + " shows it", "mcp-scheduler missions show " + m + " shows it"},
		{"resolve_escalation with action retry once decided", "mcp-scheduler escalations resolve " + e + " --action retry once decided"},
		{"list_missions shows them", "mcp-scheduler missions list shows them"},
		{"settle it (update_voyage requirements_changed=false)", "settle it (update_voyage requirements_changed=false)"},
		{"approve_landing " + m + " (get_mission_diff shows it)", "approve_landing " + m + " (get_mission_diff shows it)"},
		{`"list_missions" is not a mission id`, `"list_missions" is not a mission id`},
	} {
		require.Contains(t, cliText(c.in, m, v, e), c.want, c.in)
	}
	// No id known: the placeholder where the flag needs an argument, the bare command otherwise.
	require.Equal(t, "mcp-scheduler escalations resolve ESCALATION_ID --action retry once fixed", cliText("resolve_escalation with action retry once fixed"))
	require.Equal(t, "mcp-scheduler missions retry first", cliText("retry_mission first"))
}
