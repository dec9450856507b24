package dashboard

import (
	"context"
	"net/http"
	"slices"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// A person raises a spent budget from the dashboard: the mission and voyage pages show the
// spend and the limits of a mission or voyage a budget holds or blocks, with a form that
// sets new limits through the engine operations update_mission and update_voyage call
// (UpdateMission, UpdateVoyage), so the rule, the refusals and the resume that follows a
// raise are the engine's.

// escalationKindBudget is the kind of the escalation a crossed budget raises (the engine's
// blockKind and blockVoyage).
const escalationKindBudget = "budget"

// BudgetView is the spend and the limits of one mission or voyage a budget holds, for the
// form that raises them. Amounts are US dollars and tokens (input, cached included, plus
// output); a limit of 0 is none.
type BudgetView struct {
	// Scope is "mission" or "voyage" (engine.ScopeMission, engine.ScopeVoyage); ID is whose.
	Scope string `json:"scope"`
	ID    string `json:"id"`
	// SpentUSD and SpentTokens are what its ended attempts spent, plus the attempt in flight
	// for a mission (its last usage report).
	SpentUSD     float64 `json:"spent_usd"`
	SpentTokens  int64   `json:"spent_tokens"`
	CostLimitUSD float64 `json:"cost_limit_usd"`
	TokenLimit   int64   `json:"token_limit"`
}

// BudgetBody is the body of POST /api/missions/{id}/budget and /api/voyages/{id}/budget:
// the new limits (an absent field stays as it is; 0 removes the limit).
type BudgetBody struct {
	CostLimitUSD *float64 `json:"cost_limit_usd,omitempty"`
	TokenLimit   *int64   `json:"token_limit,omitempty"`
}

func (h *Handler) missionBudget(w http.ResponseWriter, r *http.Request) {
	var b BudgetBody
	if !readBody(w, r, &b) {
		return
	}
	m, err := h.deps.Engine.UpdateMission(r.Context(), r.PathValue("id"),
		engine.MissionPatch{CostLimitUSD: b.CostLimitUSD, TokenLimit: b.TokenLimit}, Actor)
	h.answer(w, m, err)
}

func (h *Handler) voyageBudget(w http.ResponseWriter, r *http.Request) {
	var b BudgetBody
	if !readBody(w, r, &b) {
		return
	}
	v, err := h.deps.Engine.UpdateVoyage(r.Context(), r.PathValue("id"),
		engine.VoyagePatch{CostLimitUSD: b.CostLimitUSD, TokenLimit: b.TokenLimit, Note: "limits set from the dashboard"}, Actor)
	h.answer(w, v, err)
}

// budgetHeld reports whether a budget holds or blocks the mission: a hold of code budget, a
// budget failure it is blocked on, or an open budget escalation that names it.
func budgetHeld(d engine.MissionDetail, escs []domain.Escalation) bool {
	if slices.ContainsFunc(d.WhyNotRunning, func(r engine.Reason) bool { return r.Code == engine.WhyBudget }) {
		return true
	}
	m := d.Mission
	if m.State == domain.StateBlocked && m.LastFailure != nil && m.LastFailure.Kind == domain.FailureBudget {
		return true
	}
	return slices.ContainsFunc(escs, openBudgetEscalation)
}

func openBudgetEscalation(e domain.Escalation) bool {
	return e.State == domain.EscalationOpen && e.Kind == escalationKindBudget
}

// missionBudgets are the budgets the mission page offers to raise: none unless a budget
// holds the mission; then its own and, when it belongs to one, its voyage's.
func (h *Handler) missionBudgets(ctx context.Context, d engine.MissionDetail, escs []domain.Escalation) ([]BudgetView, error) {
	if !budgetHeld(d, escs) {
		return nil, nil
	}
	m := d.Mission
	spent := m.Usage
	if d.RunningUsage != nil {
		spent.CostUSD += d.RunningUsage.CostUSD
		spent.InputTokens += d.RunningUsage.InputTokens
		spent.OutputTokens += d.RunningUsage.OutputTokens
	}
	out := []BudgetView{{Scope: engine.ScopeMission, ID: m.ID, SpentUSD: spent.CostUSD, SpentTokens: spent.Tokens(),
		CostLimitUSD: m.CostLimitUSD, TokenLimit: d.TokenLimit}}
	if m.VoyageID == "" {
		return out, nil
	}
	v, err := h.deps.Engine.Voyage(ctx, m.VoyageID)
	if err != nil {
		return nil, err
	}
	return append(out, voyageBudget(v)), nil
}

func voyageBudget(v domain.Voyage) BudgetView {
	return BudgetView{Scope: engine.ScopeVoyage, ID: v.ID, SpentUSD: v.Usage.CostUSD, SpentTokens: v.Usage.Tokens(),
		CostLimitUSD: v.CostLimitUSD, TokenLimit: v.TokenLimit}
}

// voyageBudgetHeld reports whether a budget holds the voyage or one of its missions: an open
// budget escalation of the voyage, or a mission held with code budget.
func voyageBudgetHeld(g engine.VoyageGraph) bool {
	if slices.ContainsFunc(g.Escalations, openBudgetEscalation) {
		return true
	}
	return slices.ContainsFunc(g.Missions, func(m engine.MissionLine) bool {
		return slices.ContainsFunc(m.Why, func(r engine.Reason) bool { return r.Code == engine.WhyBudget })
	})
}
