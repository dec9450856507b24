package tools

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const unknownMission = "msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"

// TestToolErrors_NameTheField: every caller mistake comes back as an isError result (not a
// protocol error) whose message names what to fix. One row per error path.
func TestToolErrors_NameTheField(t *testing.T) {
	b := setup(t, setupOpts{})
	pending := b.createMission(map[string]any{"title": "pending one"})
	done := b.createMission(map[string]any{"title": "cancelled one"})
	ok[MissionResult](b, "cancel_mission", map[string]any{"mission_id": done.ID})
	running := b.createMission(map[string]any{"title": "running one", "priority": 1})
	claimed := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "errs"})
	require.Equal(t, running.ID, claimed.Mission.ID)
	esc := ok[EscalationResult](b, "escalate", map[string]any{"reason": "r", "decision_required": "d"}).Escalation
	ok[EscalationResult](b, "resolve_escalation", map[string]any{"escalation_id": esc.ID, "action": "acknowledge"})
	fence := func(extra map[string]any) map[string]any {
		m := map[string]any{"mission_id": running.ID, "epoch": claimed.Epoch + 1}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		tool string
		args map[string]any
		want []string // every one must appear in the message
	}{
		// create_mission
		{"create_mission", map[string]any{}, []string{"title"}},
		{"create_mission", map[string]any{"title": "   "}, []string{"title", "empty"}},
		{"create_mission", map[string]any{"title": "a\x00b"}, []string{"title", "control"}},
		{"create_mission", map[string]any{"title": strings.Repeat("x", 300)}, []string{"/title"}},
		{"create_mission", map[string]any{"title": "t", "priority": 5000}, []string{"invalid arguments: /priority: maximum: got 5,000, want 1,000"}},
		{"create_mission", map[string]any{"title": "t", "deadline": "tomorrow"}, []string{"deadline", "RFC 3339"}},
		{"create_mission", map[string]any{"title": "t", "deadline": "2001-01-01T00:00:00Z"}, []string{"deadline", "past"}},
		{"create_mission", map[string]any{"title": "t", "depends_on": []string{unknownMission}}, []string{"depends_on[0]", "does not exist"}},
		{"create_mission", map[string]any{"title": "t", "depends_on": []string{"nope"}}, []string{"depends_on[0]", "not a mission id"}},
		{"create_mission", map[string]any{"title": "t", "voyage_id": "vyg_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"}, []string{"voyage", "not found"}},
		{"create_mission", map[string]any{"title": "t", "workspace": "bogus"}, []string{"/workspace"}},
		{"create_mission", map[string]any{"title": "t", "write_area": []string{"/etc/**"}}, []string{"write_area[0]", "relative"}},
		{"create_mission", map[string]any{"title": "t", "persona": "Bad Persona"}, []string{"persona"}},
		{"create_mission", map[string]any{"title": "t", "repository": "/somewhere/else"}, []string{"repository", "not a configured repository"}},
		{"create_mission", map[string]any{"title": "t", "colour": "red"}, []string{"colour"}},
		{"create_mission", map[string]any{"title": "t", "retry_budget": "three"}, []string{"/retry_budget"}},
		{"create_mission", map[string]any{"title": "t", "model_policy": map[string]any{"mode": "scheduler_forced"}}, []string{"model_policy.model"}},
		// dispatch
		{"dispatch", map[string]any{"title": "v", "missions": []any{}}, []string{"/missions"}},
		{"dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": "a b", "title": "x"}}}, []string{"/missions/0/key"}},
		{"dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": "a", "title": "x"}, map[string]any{"key": "a", "title": "y"}}}, []string{"missions[1].key", "used by two"}},
		{"dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": "a", "title": "x"}}, "edges": []any{map[string]any{"mission": "zz", "depends_on": "a"}}}, []string{"edges[0].mission", "zz"}},
		{"dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": "a", "title": "x"}}, "edges": []any{map[string]any{"mission": "a", "depends_on": "ghost"}}}, []string{"edges[0].depends_on", "ghost"}},
		{"dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": "a", "title": "x"}, map[string]any{"key": "b", "title": "y", "depends_on": []string{"a"}}},
			"edges": []any{map[string]any{"mission": "a", "depends_on": "b"}}}, []string{"cycle", "a → b → a"}},
		{"dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": "a", "title": "x"}}, "edges": []any{map[string]any{"mission": "a", "depends_on": "a"}}}, []string{"cycle"}},
		{"dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": "a", "title": "x", "deadline": "soon"}}}, []string{"missions[0].deadline"}},
		{"dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": "a", "title": "x"}}, "wait_seconds": 601}, []string{"/wait_seconds"}},
		{"dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": "a", "title": "x"}}, "edges": []any{map[string]any{"mission": "a", "depends_on": pending.ID, "type": "sideways"}}}, []string{"/edges/0/type"}},
		// update_mission
		{"update_mission", map[string]any{"mission_id": pending.ID}, []string{"changes nothing"}},
		{"update_mission", map[string]any{"mission_id": running.ID, "title": "new"}, []string{"title", "running"}},
		{"update_mission", map[string]any{"mission_id": done.ID, "priority": 3}, []string{"cancelled", "retry_mission"}},
		{"update_mission", map[string]any{"mission_id": unknownMission, "priority": 3}, []string{"not found", unknownMission}},
		{"update_mission", map[string]any{"mission_id": pending.ID, "deadline": "later"}, []string{"deadline"}},
		// cancel, retry, approve, block
		{"cancel_mission", map[string]any{"mission_id": done.ID}, []string{"cancelled", "cancel is not allowed"}},
		{"cancel_mission", map[string]any{"mission_id": "../../outside"}, []string{"mission_id", "not a mission id"}},
		{"retry_mission", map[string]any{"mission_id": pending.ID}, []string{"pending", "retry"}},
		{"approve_landing", map[string]any{"mission_id": pending.ID}, []string{"mission_id", "not waiting for approval"}},
		{"block_mission", map[string]any{"mission_id": pending.ID, "reason": "r"}, []string{"missing property 'decision_required'"}},
		{"block_mission", map[string]any{"mission_id": running.ID, "reason": "r", "decision_required": "d", "epoch": claimed.Epoch + 5}, []string{"lease lost"}},
		{"block_mission", map[string]any{"mission_id": pending.ID, "reason": "r", "decision_required": "d", "route": "boss"}, []string{"/route"}},
		// queries
		{"get_mission", map[string]any{"mission_id": unknownMission}, []string{"not found"}},
		{"get_mission", map[string]any{}, []string{"mission_id"}},
		{"list_missions", map[string]any{"states": []string{"sleeping"}}, []string{"/states/0"}},
		{"list_missions", map[string]any{"voyage_id": "v1"}, []string{"voyage_id"}},
		{"voyage_status", map[string]any{"voyage_id": "vyg_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"}, []string{"voyage", "not found"}},
		{"get_events", map[string]any{"mission_id": "x"}, []string{"mission_id"}},
		{"get_events", map[string]any{"limit": 5000}, []string{"/limit"}},
		{"get_mission_log", map[string]any{"mission_id": pending.ID, "attempt": 3}, []string{"attempt", "0 attempt"}},
		{"get_mission_log", map[string]any{"mission_id": pending.ID, "tail_bytes": 0}, []string{"/tail_bytes"}},
		{"get_mission_diff", map[string]any{"mission_id": pending.ID}, []string{"no workspace"}},
		// escalations
		{"escalate", map[string]any{"reason": "r"}, []string{"decision_required"}},
		{"escalate", map[string]any{"reason": "r", "decision_required": "d", "mission_ids": []string{unknownMission}}, []string{"mission_ids[0]"}},
		{"resolve_escalation", map[string]any{"escalation_id": esc.ID, "action": "retry"}, []string{"escalation_id", "already resolved"}},
		{"resolve_escalation", map[string]any{"escalation_id": esc.ID, "action": "shrug"}, []string{"/action"}},
		{"resolve_escalation", map[string]any{"escalation_id": "esc_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D", "action": "retry"}, []string{"escalation", "not found"}},
		{"list_escalations", map[string]any{"state": "closed"}, []string{"/state"}},
		// pull mode
		{"claim_mission", map[string]any{}, []string{"agent_id"}},
		{"claim_mission", map[string]any{"agent_id": "a b"}, []string{"/agent_id"}},
		{"claim_mission", map[string]any{"agent_id": "a", "wait_seconds": -1}, []string{"/wait_seconds"}},
		{"heartbeat", fence(nil), []string{"lease lost", "stop working"}},
		{"heartbeat", map[string]any{"mission_id": running.ID}, []string{"epoch"}},
		{"heartbeat", map[string]any{"mission_id": unknownMission, "epoch": 1}, []string{"not found"}},
		{"report_progress", fence(map[string]any{"message": "m", "percent": 150}), []string{"/percent"}},
		{"report_progress", fence(map[string]any{"message": "m"}), []string{"lease lost"}},
		{"checkpoint_mission", map[string]any{"mission_id": running.ID, "epoch": claimed.Epoch}, []string{"checkpoint"}},
		{"checkpoint_mission", fence(map[string]any{"checkpoint": map[string]any{"a": 1}}), []string{"lease lost"}},
		{"yield_mission", fence(nil), []string{"lease lost"}},
		{"yield_mission", map[string]any{"mission_id": running.ID, "epoch": claimed.Epoch, "wait_for": "godot"}, []string{"/wait_for"}},
		{"complete_mission", fence(map[string]any{"summary": "s"}), []string{"lease lost"}},
		{"complete_mission", map[string]any{"mission_id": running.ID, "epoch": claimed.Epoch, "summary": "s", "verdict": "great"}, []string{"/verdict"}},
		{"fail_mission", fence(map[string]any{"failure": map[string]any{"kind": "error"}}), []string{"lease lost"}},
		{"fail_mission", map[string]any{"mission_id": running.ID, "epoch": claimed.Epoch, "failure": map[string]any{"kind": "oops"}}, []string{"/failure/kind"}},
		{"fail_mission", map[string]any{"mission_id": running.ID, "epoch": claimed.Epoch}, []string{"failure"}},
	}
	for _, c := range cases {
		msg := fails(b, c.tool, c.args)
		require.NotContains(t, msg, "&{", "schema problems are worded, not dumped: %s", msg)
		for _, w := range c.want {
			require.Contains(t, msg, w, "%s %v", c.tool, c.args)
		}
	}
	// None of these changed the running mission's lease.
	hb := ok[HeartbeatResult](b, "heartbeat", map[string]any{"mission_id": running.ID, "epoch": claimed.Epoch})
	require.Equal(t, claimed.Epoch, hb.Epoch)
}
