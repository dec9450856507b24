package engine

import (
	"fmt"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Texts of the escalation that a crossed budget raises on a mission, when the limit it
// crossed is one of its own or its voyage's: raising that limit is the decision, and
// resumeBudgetBlocked then puts the mission back and closes the escalation by itself.
const (
	budgetResumes  = "the mission then resumes by itself and this escalation closes; or cancel the mission"
	budgetSafeStep = "leave it blocked: it spends nothing while it waits, and it resumes by itself once the limit is raised"
)

// Texts of that escalation when neither the mission's nor its voyage's limit is crossed (a
// profile's daily cap, or a budget the agent itself reported): raising a limit resumes
// nothing, so the cap is raised or the day passes and then the escalation is resolved.
const (
	budgetOtherDecision = "raise the budget the failure names (a profile's daily cap: [[profiles]] daily_cost_limit_usd or daily_token_limit in the configuration, or wait for the next day), then resolve_escalation with action retry; or cancel the mission"
	budgetOtherStep     = "resolve_escalation with action retry once fixed"
)

// budgetDecision is the decision and the safe next step of the escalation of m, blocked by a
// crossed budget: it names each of the mission's and its voyage's limits that m's spend
// (its attempts so far, the failed one included) reached, with the update that raises it; a
// voyage's limit is named only for a mission of a voyage. tokens is m's token limit (0: none).
func (o *op) budgetDecision(m *domain.Mission, tokens int64) (decision, step string, err error) {
	var crossed []string
	if br := CheckSpend(Spend{Mission: m, MissionSpent: m.Usage, MissionTokens: tokens}); br != nil {
		crossed = append(crossed, br.limitText())
	}
	if m.VoyageID != "" {
		v, err := o.tx.VoyageGet(o.ctx, m.VoyageID)
		if err != nil {
			return "", "", err
		}
		if br := CheckSpend(Spend{Voyage: &v, VoyageSpent: v.Usage}); br != nil {
			crossed = append(crossed, br.limitText())
		}
	}
	if len(crossed) == 0 {
		return budgetOtherDecision, budgetOtherStep, nil
	}
	return "raise " + strings.Join(crossed, " and ") + " above what was spent: " + budgetResumes, budgetSafeStep, nil
}

// limitText names the limit b crossed and the update that raises it: "mission msn_…'s cost
// limit (update_mission cost_limit_usd)".
func (b Breach) limitText() string {
	measure := "cost"
	if b.Measure == MeasureToken {
		measure = "token"
	}
	return fmt.Sprintf("%s %s's %s limit (%s)", b.Scope, b.Subject, measure, b.raise())
}

// voyageBudgetDecision is the decision of a voyage's report that a spent budget stopped it:
// the waiting missions' reasons name the budget and the update that raises it; once it is
// raised they start again and the report closes (SettleVoyage reopens the voyage).
const voyageBudgetDecision = "raise the spent budget the waiting missions' reasons name: they then go on by themselves and this report closes; or cancel the voyage"
