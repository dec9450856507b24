package tools

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/prompts"
)

func getPrompt(b *bundle, name string, args map[string]string) (string, error) {
	res, err := b.client.GetPrompt(b.ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: name, Arguments: args}})
	if err != nil {
		return "", err
	}
	require.Len(b.t, res.Messages, 1)
	require.Equal(b.t, mcp.RoleUser, res.Messages[0].Role)
	tc, ok := mcp.AsTextContent(res.Messages[0].Content)
	require.True(b.t, ok)
	return tc.Text, nil
}

func TestPrompts_ServedAndFilled(t *testing.T) {
	b := setup(t, setupOpts{})
	list, err := b.client.ListPrompts(b.ctx, mcp.ListPromptsRequest{})
	require.NoError(t, err)
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
		require.NotEmpty(t, p.Description)
	}
	require.ElementsMatch(t, prompts.Names(), names)

	plan, err := getPrompt(b, "plan_voyage", map[string]string{"goal": "ship the login page", "max_missions": "4"})
	require.NoError(t, err)
	want, err := prompts.PlanVoyage(prompts.Plan{Goal: "ship the login page", MaxMissions: 4})
	require.NoError(t, err)
	require.Equal(t, want, plan, "the MCP prompt is the template's rendering")
	w := newStdioWire(t, b) // a real transport: the in-process client has no preflight (preflight.go)
	wantPromptArg(t, w, "plan_voyage", `{}`, `"goal" is required`)
	wantPromptArg(t, w, "plan_voyage", `{"goal":"g","max_missions":"many"}`, `"max_missions" "many" is not a positive number`)

	m := b.createMission(map[string]any{"title": "Write docs", "brief": "Document the API.", "acceptance_criteria": []string{"every endpoint documented"}})
	brief, err := getPrompt(b, "agent_brief", map[string]string{"mission_id": m.ID})
	require.NoError(t, err)
	require.Contains(t, brief, "Document the API.")
	require.Contains(t, brief, "every endpoint documented")
	require.Contains(t, brief, "heartbeat")
	ndjson, err := getPrompt(b, "agent_brief", map[string]string{"mission_id": m.ID, "pull_mode": "false"})
	require.NoError(t, err)
	require.Contains(t, ndjson, "worker.result")
	wantPromptArg(t, w, "agent_brief", `{"mission_id":"../x"}`, `"mission_id" "../x" is not a mission id`)

	c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "w"})
	ok[MissionResult](b, "complete_mission", map[string]any{"mission_id": m.ID, "epoch": c.Epoch, "summary": "documented all of it"})
	review, err := getPrompt(b, "review_mission", map[string]string{"mission_id": m.ID})
	require.NoError(t, err)
	require.Contains(t, review, "documented all of it")
	require.Contains(t, review, c.Workspace.Branch)

	esc := ok[EscalationResult](b, "escalate", map[string]any{"reason": "the API has no owner", "decision_required": "who owns it?",
		"mission_ids": []string{m.ID}, "route": "person"}).Escalation
	report, err := getPrompt(b, "escalation_report", map[string]string{"escalation_id": esc.ID})
	require.NoError(t, err)
	require.Contains(t, report, "the API has no owner")
	require.Contains(t, report, esc.ID)
	require.Contains(t, report, m.ID+" (Write docs): completed")
	fresh, err := getPrompt(b, "escalation_report", map[string]string{"mission_id": m.ID})
	require.NoError(t, err)
	require.Contains(t, fresh, "escalate")
	wantPromptArg(t, w, "escalation_report", `{"escalation_id":"esc_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"}`, `"escalation_id" names no escalation`)
}

// wantPromptArg asserts that prompts/get of name with args answers -32602 saying says.
func wantPromptArg(t *testing.T, w taskWire, name, args, says string) {
	t.Helper()
	_, e := w.rpc("prompts/get", `{"name":"`+name+`","arguments":`+args+`}`)
	wantCode(t, e, mcp.INVALID_PARAMS, says)
}
