package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// blockOnBudget runs mission id's attempt and fails it on its cost budget ($0.50 spent), as
// the supervisor does when a usage report crosses the limit: the mission blocks with a
// budget escalation, which it returns.
func blockOnBudget(t *testing.T, s *sandbox, id string, limit float64) domain.Escalation {
	t.Helper()
	ctx := t.Context()
	eng := engine.New(teststore.OpenAt(t, filepath.Join(s.dataDir, "mcp-scheduler.db")), engine.Options{DefaultRepository: s.repo})
	p, err := eng.BeginClaim(ctx, engine.ClaimRequest{AgentID: "test-agent"})
	require.NoError(t, err)
	c, err := p.HandOver(ctx, engine.Workspace{}, nil)
	require.NoError(t, err)
	require.Equal(t, id, c.Mission.ID)
	br := engine.Breach{Scope: engine.ScopeMission, Subject: id, Measure: engine.MeasureCost, Spent: 0.5, Limit: limit}
	_, err = eng.Fail(ctx, c.Mission.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureBudget, Tool: "budget", Summary: br.Message()},
		Usage: &domain.Usage{InputTokens: 1000, OutputTokens: 100, CostUSD: 0.5}})
	require.NoError(t, err)
	es := cliJSON[[]domain.Escalation](s, "escalations", "list", "--mission", id)
	require.Len(t, es, 1)
	require.Equal(t, "budget", es[0].Kind)
	return es[0]
}

// A mission blocked on its budget is shown in the command line's words everywhere a person
// reads it (its attempts, the escalation's evidence, decision and safe step): a command with
// the mission's id filled in, no MCP tool, no voyage for a mission without one; the decision
// says raising the limit resumes it (trial of issue 16). --json keeps the engine's sentences.
func TestCLI_BudgetEscalationInCommandWords(t *testing.T) {
	s := newSandbox(t)
	m := cliJSON[domain.Mission](s, "go", "spends its budget", "--cost-limit-usd", "0.25")
	e := blockOnBudget(t, s, m.ID, 0.25)
	raise := "mcp-scheduler missions update " + m.ID + " --cost-limit-usd"

	out, errs, code := s.cli("missions", "show", m.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "budget: mission "+m.ID+"'s cost budget crossed: spent $0.5000 of $0.2500; raise it ("+raise+") or cancel", "the attempt's failure")
	require.Contains(t, out, "evidence: summary: mission "+m.ID+"'s cost budget crossed")
	require.Empty(t, toolNames(t).FindAllString(out, -1), "no tool names in a person's output:\n%s", out)
	require.NotContains(t, out, "cost_limit_usd")
	require.NotContains(t, out, "VOYAGE_ID")
	require.NotContains(t, out, "voyages update", "the mission has no voyage")

	out, errs, code = s.cli("escalations", "show", e.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "decide      raise mission "+m.ID+"'s cost limit ("+raise+") above what was spent: the mission then resumes by itself and this escalation closes; or cancel the mission")
	require.Contains(t, out, "safe step   leave it blocked: it spends nothing while it waits, and it resumes by itself once the limit is raised")
	require.Contains(t, out, "  - summary: mission "+m.ID+"'s cost budget crossed: spent $0.5000 of $0.2500; raise it ("+raise+") or cancel")
	require.Empty(t, toolNames(t).FindAllString(out, -1), "no tool names in a person's output:\n%s", out)
	require.NotContains(t, out, "cost_limit_usd")

	j := cliJSON[domain.Escalation](s, "escalations", "show", e.ID)
	require.Contains(t, j.DecisionRequired, "(update_mission cost_limit_usd)", "--json carries the engine's sentence")
}

// A bad --voyage is told with where the command line shows voyage ids, not an MCP answer.
func TestCLI_BadVoyageIDNamesCommands(t *testing.T) {
	s := newSandbox(t)
	_, errs, code := s.cli("go", "x", "--voyage", "../../x")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, "copy one from mcp-scheduler voyages list, or the voyage line of mcp-scheduler missions show")
	require.NotContains(t, errs, "dispatch's answer")
	require.NotContains(t, errs, "voyage_id")
}

// missions show prints the limits beside the spend; an update that leaves the budget spent
// succeeds but says so (the rule of engine.CheckSpend) and the mission stays blocked; one
// above the spend resumes it without a warning. voyages update warns the same way.
func TestCLI_BudgetSpendShownAndStillSpentWarned(t *testing.T) {
	s := newSandbox(t)
	m := cliJSON[domain.Mission](s, "go", "spends its budget", "--cost-limit-usd", "0.25", "--token-limit", "5000")
	blockOnBudget(t, s, m.ID, 0.25)
	out, errs, code := s.cli("missions", "show", m.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "cost        $0.5000 (limit $0.2500)")
	require.Contains(t, out, "tokens      1100 (limit 5000)")

	for _, limit := range []string{"0.3", "0.5"} {
		out, errs, code = s.cli("missions", "update", m.ID, "--cost-limit-usd", limit)
		require.Equal(t, 0, code, errs)
		require.Contains(t, out, m.ID+"  blocked")
		require.Contains(t, errs, "warning: the budget is still spent: mission "+m.ID+"'s cost budget is spent ($0.5000 of $"+limit+"000): nothing more starts until it is raised (mcp-scheduler missions update "+m.ID+" --cost-limit-usd); it stays blocked", limit)
	}
	out, errs, code = s.cli("missions", "update", m.ID, "--cost-limit-usd", "1")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, m.ID+"  pending", "raised above the spend: it resumes")
	require.NotContains(t, errs, "warning")
	out, errs, code = s.cli("missions", "update", m.ID, "--token-limit", "1000")
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, "warning: the budget is still spent: mission "+m.ID+"'s tokens budget is spent (1100 tokens of 1000 tokens)", "the token limit by the same rule")
	require.Contains(t, errs, "; nothing more of it starts")
	_, errs, code = s.cli("missions", "update", m.ID, "--priority", "5")
	require.Equal(t, 0, code, errs)
	require.NotContains(t, errs, "warning", "no limit changed: no budget warning")

	cliJSON[domain.Mission](s, "missions", "cancel", m.ID)
	ctx := t.Context()
	eng := engine.New(teststore.OpenAt(t, filepath.Join(s.dataDir, "mcp-scheduler.db")), engine.Options{DefaultRepository: s.repo})
	d, err := eng.Dispatch(ctx, engine.VoyageSpec{Title: "budgeted", CostLimitUSD: 0.25, Missions: []engine.MissionSpec{{Key: "a", Title: "a"}}}, "test")
	require.NoError(t, err)
	p, err := eng.BeginClaim(ctx, engine.ClaimRequest{AgentID: "test-agent"})
	require.NoError(t, err)
	c, err := p.HandOver(ctx, engine.Workspace{}, nil)
	require.NoError(t, err)
	require.Equal(t, d.IDs["a"], c.Mission.ID)
	_, err = eng.Fail(ctx, c.Mission.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureTest, Summary: "tests failed"},
		Usage: &domain.Usage{InputTokens: 10, CostUSD: 0.5}})
	require.NoError(t, err)
	vid := d.Voyage.ID
	out, errs, code = s.cli("voyages", "update", vid, "--cost-limit-usd", "0.4")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, vid)
	require.Contains(t, errs, "warning: the budget is still spent: voyage "+vid+"'s cost budget is spent ($0.5000 of $0.4000): nothing more starts until it is raised (mcp-scheduler voyages update "+vid+" --cost-limit-usd); its missions that have not started stay held")
	_, errs, code = s.cli("voyages", "update", vid, "--cost-limit-usd", "2")
	require.Equal(t, 0, code, errs)
	require.NotContains(t, errs, "warning")
}
