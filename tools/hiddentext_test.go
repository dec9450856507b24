package tools

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Issue 28 over MCP: a title, a dispatch key or an escalation kind holding a bidirectional
// control or an invisible character is a tool error naming the field, the character and
// where (the engine's rule, domain.CheckName), and nothing is stored; a brief holds them and
// is answered whole, as stored (the displays escape it).
func TestTools_NamesRefuseHiddenCharacters(t *testing.T) {
	b := setup(t, setupOpts{})
	msg := fails(b, "create_mission", map[string]any{"title": "abcd\u202Eexe.txt"})
	require.Equal(t, "invalid argument: title: contains U+202E (RIGHT-TO-LEFT OVERRIDE) at character 5: control characters, bidirectional controls and invisible characters are not allowed in titles (remove it)", msg)
	msg = fails(b, "dispatch", map[string]any{"title": "v", "missions": []any{
		map[string]any{"key": "a", "title": "a"}, map[string]any{"key": "b\u200D", "title": "b"}}})
	require.Contains(t, msg, "/missions/1/key: contains U+200D (ZERO WIDTH JOINER) at character 2: control characters, bidirectional controls and invisible characters are not allowed in this field (remove it)",
		"the input schema's pattern refuses it first, worded by the rule")
	msg = fails(b, "claim_mission", map[string]any{"agent_id": "agent​7"})
	require.Contains(t, msg, "/agent_id: contains U+200B (ZERO WIDTH SPACE) at character 6: ")
	msg = fails(b, "dispatch", map[string]any{"title": "zero\u200Bwidth", "missions": []any{map[string]any{"key": "a", "title": "a"}}})
	require.Contains(t, msg, "invalid argument: title: contains U+200B (ZERO WIDTH SPACE) at character 5: ")
	msg = fails(b, "escalate", map[string]any{"kind": "deci\u2067sion", "reason": "r", "decision_required": "d"})
	require.Contains(t, msg, "invalid argument: kind: contains U+2067 (RIGHT-TO-LEFT ISOLATE) at character 5: ")
	require.Empty(t, ok[MissionList](b, "list_missions", nil).Missions, "nothing refused was stored")

	m := b.createMission(map[string]any{"title": "plain", "brief": "see \u202Eexe.txt"})
	msg = fails(b, "update_mission", map[string]any{"mission_id": m.ID, "title": "new\u00ADtitle"})
	require.Contains(t, msg, "invalid argument: title: contains U+00AD (SOFT HYPHEN) at character 4: ")
	got := ok[engine.MissionDetail](b, "get_mission", map[string]any{"mission_id": m.ID})
	require.Equal(t, "plain", got.Mission.Title)
	require.Equal(t, "see \u202Eexe.txt", got.Mission.Brief, "free text is stored and answered as written")
}
