package dashboard_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// spendOver runs mission id and fails its attempt on its cost budget (usage $0.50, as the
// supervisor does when a usage report crosses the limit): the mission blocks with a budget
// escalation.
func (f *fixture) spendOver(id string) {
	f.t.Helper()
	m := f.run(id)
	br := engine.Breach{Scope: engine.ScopeMission, Subject: id, Measure: engine.MeasureCost, Spent: 0.5, Limit: m.CostLimitUSD}
	_, err := f.eng.Fail(f.ctx, m.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureBudget, Tool: "budget",
		Summary: br.Message()}, Usage: &domain.Usage{InputTokens: 1000, OutputTokens: 100, CostUSD: 0.5}})
	require.NoError(f.t, err)
	got, err := f.eng.Mission(f.ctx, id)
	require.NoError(f.t, err)
	require.Equal(f.t, domain.StateBlocked, got.State)
}

// A mission blocked by its cost budget: its page shows the spend and the limits (its own and
// its voyage's); a negative limit is refused with the engine's sentence and changes nothing;
// requests without the session, without an Origin, from another origin or not in JSON are
// refused; a new limit set through the page's endpoint resumes the mission (the engine's
// UpdateMission), recorded with the dashboard's actor. A voyage budget is raised the same way.
func TestBudget_RaiseFromTheDashboard(t *testing.T) {
	const token = "budget-token"
	f := start(t, token)
	d, err := f.eng.Dispatch(f.ctx, engine.VoyageSpec{Title: "budgeted", CostLimitUSD: 3, Missions: []engine.MissionSpec{
		{Key: "a", Title: "spends", CostLimitUSD: 0.25},
		{Key: "b", Title: "after", DependsOn: []string{"a"}},
	}}, "test")
	require.NoError(t, err)
	a := d.IDs["a"]
	var page dashboard.MissionPage
	f.getJSON("/api/missions/"+a, &page)
	require.Empty(t, page.Budgets, "no budget holds it yet")

	f.spendOver(a)
	f.getJSON("/api/missions/"+a, &page)
	require.Equal(t, []dashboard.BudgetView{
		{Scope: "mission", ID: a, SpentUSD: 0.5, SpentTokens: 1100, CostLimitUSD: 0.25},
		{Scope: "voyage", ID: d.Voyage.ID, SpentUSD: 0.5, SpentTokens: 1100, CostLimitUSD: 3},
	}, page.Budgets)

	// The page's words beside the engine's: no MCP tool in the failure, the reasons, the
	// escalation's reason, decision and evidence; the engine's fields stay as they are.
	require.Contains(t, page.Mission.LastFailure.Summary, "(update_mission cost_limit_usd)", "the engine's sentence is kept")
	require.Contains(t, page.PageLastFailure, "raise it (the mission page's budget form) or cancel")
	require.Len(t, page.Attempts, 1)
	require.Equal(t, page.PageLastFailure, page.PageAttemptFailures[page.Attempts[0].Attempt])
	var escs []dashboard.EscalationView
	f.getJSON("/api/escalations", &escs)
	require.NotEmpty(t, escs)
	budgetEscs := 0
	for _, e := range escs {
		if e.Kind != "budget" {
			continue
		}
		budgetEscs++
		require.Contains(t, e.DecisionRequired, "(update_mission cost_limit_usd)", "the engine's sentence is kept")
		require.Equal(t, "raise mission "+a+"'s cost limit (the mission page's budget form) above what was spent: the mission then resumes by itself and this escalation closes; or cancel the mission", e.PageDecision)
		require.Contains(t, e.PageNextStep, "resumes by itself once the limit is raised")
		require.Contains(t, e.PageReason, "raise it (the mission page's budget form) or cancel")
		require.Len(t, e.PageEvidence, len(e.Evidence))
		for i, line := range e.PageEvidence {
			require.NotContains(t, line, "update_mission", "evidence line %d: %s", i, e.Evidence[i])
		}
	}
	require.Equal(t, 1, budgetEscs)

	auth := map[string]string{"Authorization": "Bearer " + token, "Origin": f.base, "Content-Type": "application/json"}
	post := func(path, body string, h map[string]string) (int, string) {
		code, b, _ := f.do(http.MethodPost, path, body, h)
		return code, b
	}
	without := func(drop string, set ...string) map[string]string {
		out := map[string]string{}
		for k, v := range auth {
			if k != drop {
				out[k] = v
			}
		}
		for i := 0; i+1 < len(set); i += 2 {
			out[set[i]] = set[i+1]
		}
		return out
	}
	path := "/api/missions/" + a + "/budget"
	code, body := post(path, `{"cost_limit_usd":-1}`, auth)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "cost_limit_usd")
	require.Contains(t, body, "negative")
	code, body = post(path, `{}`, auth)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "changes nothing")
	for name, h := range map[string]map[string]string{
		"no session":    without("Authorization"),
		"no Origin":     without("Origin"),
		"another site":  without("Origin", "Origin", "https://evil.example"),
		"a local page":  without("Origin", "Origin", "http://localhost:1"),
		"a plain form":  without("Content-Type", "Content-Type", "application/x-www-form-urlencoded"),
		"the raw token": without("Authorization", "Cookie", dashboard.CookieName+"="+token),
	} {
		code, body := post(path, `{"cost_limit_usd":5}`, h)
		require.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusUnsupportedMediaType}, code, "%s: %s", name, body)
	}
	m, err := f.eng.Mission(f.ctx, a)
	require.NoError(t, err)
	require.Equal(t, 0.25, m.CostLimitUSD, "refused requests change nothing")
	require.Equal(t, domain.StateBlocked, m.State)

	code, body = post(path, `{"cost_limit_usd":5,"token_limit":200000}`, auth)
	require.Equal(t, http.StatusOK, code, body)
	page = dashboard.MissionPage{}
	f.getJSON("/api/missions/"+a, &page)
	require.Equal(t, domain.StatePending, page.Mission.State, "raising the limit resumes it")
	require.Equal(t, 5.0, page.Mission.CostLimitUSD)
	require.Equal(t, int64(200000), page.TokenLimit)
	require.Empty(t, page.Budgets, "nothing holds it any more")
	evs, err := f.eng.Events(f.ctx, engine.EventFilter{MissionID: a, Types: []string{"mission.updated"}})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, dashboard.Actor, evs[0].Actor)

	vpath := "/api/voyages/" + d.Voyage.ID + "/budget"
	code, body = post(vpath, `{"token_limit":-5}`, auth)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "token_limit")
	code, body = post(vpath, `{"cost_limit_usd":0.4}`, auth)
	require.Equal(t, http.StatusOK, code, body)
	var vp dashboard.VoyagePage
	f.getJSON("/api/voyages/"+d.Voyage.ID, &vp)
	require.NotNil(t, vp.Budget, "the voyage's spend ($0.50) is over its new limit: its missions are held")
	require.Equal(t, dashboard.BudgetView{Scope: "voyage", ID: d.Voyage.ID, SpentUSD: 0.5, SpentTokens: 1100, CostLimitUSD: 0.4}, *vp.Budget)
	code, body = post(vpath, `{"cost_limit_usd":10}`, auth)
	require.Equal(t, http.StatusOK, code, body)
	vp = dashboard.VoyagePage{}
	f.getJSON("/api/voyages/"+d.Voyage.ID, &vp)
	require.Nil(t, vp.Budget)
}
