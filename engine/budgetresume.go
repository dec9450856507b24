package engine

import (
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// resumeBudgetBlocked puts a mission that a crossed budget blocked (last failure of kind
// budget, its escalation still open) back to pending once its own and its voyage's cost
// limits allow it again: raising the limit (update_mission, update_voyage cost_limit_usd or
// token_limit) is
// the decision that escalation asked for, so nobody has to resolve it as well. A profile's
// daily cap is the planner's to apply when the mission is picked again.
func (o *op) resumeBudgetBlocked(m *domain.Mission) error {
	if m.State != domain.StateBlocked || m.EscalationID == "" || m.LastFailure == nil || m.LastFailure.Kind != domain.FailureBudget {
		return nil
	}
	var v *domain.Voyage
	if m.VoyageID != "" {
		vo, err := o.tx.VoyageGet(o.ctx, m.VoyageID)
		if err != nil {
			return err
		}
		v = &vo
	}
	tokens, err := o.tx.MissionTokenLimitGet(o.ctx, m.ID)
	if err != nil {
		return err
	}
	if VoyageHold(v, m, tokens) != nil {
		return nil // still over a limit: it stays blocked
	}
	esc, err := o.tx.EscalationGet(o.ctx, m.EscalationID)
	if err != nil {
		return err
	}
	if esc.State == domain.EscalationOpen {
		if err := o.closeEscalation(&esc, ResolveRetry, "the budget was raised"); err != nil {
			return err
		}
	}
	if err := o.applyResolution(m.ID, esc.ID, ResolveRetry, "the budget was raised"); err != nil {
		return err
	}
	return o.reopenVoyage(m.VoyageID, esc.ID)
}

// resumeVoyageBudget applies resumeBudgetBlocked to every mission of voyage id.
func (o *op) resumeVoyageBudget(id string) error {
	ms, err := o.tx.VoyageMissions(o.ctx, id)
	if err != nil {
		return err
	}
	for i := range ms {
		if err := o.resumeBudgetBlocked(&ms[i]); err != nil {
			return err
		}
	}
	return nil
}
