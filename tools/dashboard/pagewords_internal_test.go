package dashboard

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// Every registered tool has an entry in pageWords (its page action, or "" for none), and
// every entry is a tool.
func TestPageWords_EveryToolHasAnEntry(t *testing.T) {
	eng := engine.New(teststore.OpenAt(t, teststore.LocationIn(t.TempDir())), engine.Options{})
	srv, err := tools.New(tools.Deps{Engine: eng}, tools.Options{Version: "test"})
	require.NoError(t, err)
	registered := map[string]bool{}
	for _, tool := range srv.Tools() {
		registered[tool.Tool.Name] = true
		_, ok := pageWords[tool.Tool.Name]
		require.True(t, ok, "tool %s has no entry in pageWords (pagewords.go): give its page action, or \"\" for none", tool.Tool.Name)
	}
	for name := range pageWords {
		require.True(t, registered[name], "pageWords names %s, which is no tool", name)
	}
}

// The engine's escalation sentences, told in the dashboard's words: no tool with a page action
// is left, and a tool without one keeps its name.
func TestPageWords_EngineSentences(t *testing.T) {
	for in, want := range map[string]string{
		"resolve_escalation with action retry once fixed":                                    "the retry button of this escalation once fixed",
		"resolve_escalation with retry once decided":                                         "the retry button of this escalation once decided",
		"get_mission_diff msn_01ABC":                                                         "the diff on mission msn_01ABC's page",
		"voyage_status vyg_01XYZ shows each mission's reason; cancel_voyage stops it safely": "voyage vyg_01XYZ's page shows each mission's reason; cancel_voyage stops it safely",
		"retry_mission msn_01ABC":                                                            "the Retry button on mission msn_01ABC's page",
		"get_mission msn_01ABC shows what it needs; cancel_mission stops it":                 "mission msn_01ABC's page shows what it needs; the cancel button of this escalation stops it",
		"update_mission with a later deadline":                                               "update_mission with a later deadline",
		"approve the landing (approve_landing) after looking at get_mission_diff":            "approve the landing (the approve landing button) after looking at the diff on the mission's page",
		"raise mission msn_01ABC's cost limit (update_mission cost_limit_usd) and voyage vyg_01XYZ's token limit (update_voyage token_limit) above what was spent: the mission then resumes":                                                  "raise mission msn_01ABC's cost limit (the mission page's budget form) and voyage vyg_01XYZ's token limit (the voyage page's budget form) above what was spent: the mission then resumes",
		"raise the budget the failure names (a profile's daily cap: [[profiles]] daily_cost_limit_usd or daily_token_limit in the configuration, or wait for the next day), then resolve_escalation with action retry; or cancel the mission": "raise the budget the failure names (a profile's daily cap: [[profiles]] daily_cost_limit_usd or daily_token_limit in the configuration, or wait for the next day), then press retry on this escalation; or cancel the mission",
		"mission msn_01ABC's cost budget crossed: spent $0.5000 of $0.2500; raise it (update_mission cost_limit_usd) or cancel":                                                                                                               "mission msn_01ABC's cost budget crossed: spent $0.5000 of $0.2500; raise it (the mission page's budget form) or cancel",
	} {
		require.Equal(t, want, pageText(in), in)
	}
}
