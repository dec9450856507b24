package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// codexSpendScript answers the requests of the mission spendID names (its workspace path
// holds the id) with one turn of 300,000 input tokens over two model requests (an
// apply_patch of a.txt, then "done"); every other mission's requests go to other.
func codexSpendScript(spendID *laterID, other modelserver.Script) modelserver.Script {
	return func(r *modelserver.Request) modelserver.Turn {
		id := spendID.get()
		if id == "" || !strings.Contains(r.Workspace(), id) {
			return other(r)
		}
		if len(r.ToolResults()) == 0 {
			return modelserver.Turn{Text: "Adding a.txt.", Usage: modelserver.Usage{InputTokens: 200_000, OutputTokens: 10},
				Calls: []modelserver.Call{{Name: "apply_patch", Freeform: modelserver.AddFilePatch("a.txt", "a\n")}}}
		}
		return modelserver.Text("done", modelserver.Usage{InputTokens: 100_000, OutputTokens: 10})
	}
}

// TestRealCodex_MissionBudgetStopsTheAttemptAtTurnEnd: the real Codex CLI reports usage only
// at turn.completed; a turn whose tokens cross the mission's cost limit (priced at $1 per
// million tokens: $0.30 against $0.25) ends the attempt with failure kind budget, not as
// completed: the mission blocks with a budget escalation showing the spend and the limit, no
// retry is spent, its work does not land, and the mission of the voyage that depends on it
// does not start. Raising the limit resumes it, and the voyage completes.
func TestRealCodex_MissionBudgetStopsTheAttemptAtTurnEnd(t *testing.T) {
	srv := modelserver.Start(t)
	spendID := newLaterID(t)
	srv.Script(codexSpendScript(spendID, patchThenCommit("b.txt", "b\n")))
	prices := func(c *scheduler.Config) { c.Prices = engine.Prices{{Model: "*", Input: 1, Output: 1}} }
	h := newLoopHarnessWith(t, []agent.Profile{codexProfile(t, srv)}, prices, "OPENAI_API_KEY="+apiKey)
	d := h.dispatch(engine.VoyageSpec{Title: "spend", Missions: []engine.MissionSpec{
		{Key: "a", Title: "spends", Brief: "Create a.txt at the top of the repository.", WriteArea: []string{"a.txt"}, CostLimitUSD: 0.25},
		{Key: "b", Title: "after", Brief: "Create b.txt at the top of the repository.", WriteArea: []string{"b.txt"}, DependsOn: []string{"a"}}}})
	a, b := d.IDs["a"], d.IDs["b"]
	spendID.set(a)

	h.until("the spending mission is blocked", func() bool { return h.mission(a).Mission.State == domain.StateBlocked })
	m := h.mission(a)
	require.Len(t, m.Attempts, 1, dumpMissions(h.ctx, h.eng))
	at := m.Attempts[0]
	require.Equal(t, domain.OutcomeFailed, at.Outcome, dumpMissions(h.ctx, h.eng))
	require.Equal(t, domain.FailureBudget, at.Failure.Kind)
	require.Contains(t, at.Failure.Summary, "mission "+a+"'s cost budget crossed: spent $0.3000 of $0.2500")
	require.Equal(t, 0, m.Mission.AttemptsUsed, "no retry spent")
	require.Equal(t, domain.Usage{InputTokens: 300_000, OutputTokens: 20, CostUSD: 0.30002}, m.Mission.Usage, "the turn's tokens, priced")
	require.NotNil(t, m.Escalation)
	require.Equal(t, "budget", m.Escalation.Kind)
	require.Contains(t, m.Escalation.Reason, "of $0.2500")
	require.Contains(t, m.Escalation.DecisionRequired, "update_mission")
	_, landed := showFile(t, h.repo, "main", "a.txt")
	require.False(t, landed, "the attempt that crossed its budget does not land")
	require.Equal(t, domain.StatePending, h.mission(b).Mission.State, "the rest of the voyage does not start")
	require.Empty(t, h.mission(b).Attempts)

	raised := 5.0
	_, err := h.eng.UpdateMission(h.ctx, a, engine.MissionPatch{CostLimitUSD: &raised}, "person")
	require.NoError(t, err)
	h.s.Wake()
	h.until("the voyage completes", func() bool {
		return h.voyage(d.Voyage.ID).Voyage.State == domain.VoyageCompleted
	})
	require.Equal(t, domain.StateCompleted, h.mission(a).Mission.State, dumpMissions(h.ctx, h.eng))
	require.Equal(t, domain.StateCompleted, h.mission(b).Mission.State)
	body, ok := showFile(t, h.repo, "main", "a.txt")
	require.True(t, ok, "a.txt landed once the limit was raised")
	require.Equal(t, "a\n", body)
}
