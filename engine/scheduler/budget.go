package scheduler

import (
	"context"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// ReasonBudget is why the supervisor stops an agent whose spend crossed a hard budget
// (agent.ExitStatus.Reason).
const ReasonBudget = "budget"

// onUsage handles task.usage: the report (priced from the table when the agent gave no cost)
// becomes the attempt's running spend in the store, and the first budget it crosses stops the
// agent's process group (within its grace period); collect then ends the attempt with failure
// kind budget.
func (sv *supervisor) onUsage(ctx context.Context, a *attemptRun, msg agent.Message) error {
	wire, ok := msg.ReportedUsage()
	if !ok {
		return nil
	}
	model := a.model()
	u, priced := sv.prices.Load().Price(model, engine.UsageFromWire(wire))
	br, err := sv.eng.ReportUsage(ctx, engine.RunningUsage{MissionID: a.fence.MissionID, Epoch: a.fence.Epoch,
		Profile: a.profile.Name, Model: model, Usage: u, Priced: priced})
	if err != nil || br == nil {
		return err
	}
	a.mu.Lock()
	first := a.budget == nil
	if first {
		a.budget = br
	}
	a.mu.Unlock()
	if first {
		sv.log.Warn("hard budget crossed: stopping the agent", "mission_id", a.fence.MissionID, "profile", a.profile.Name,
			"scope", br.Scope, "spent", br.Spent, "limit", br.Limit)
		sv.stopAsync(a, ReasonBudget)
	}
	return nil
}

// failBudget ends an attempt stopped on a budget: failure kind budget, whose summary shows the
// spend and the limit (the mission blocks with an escalation that says so, no retry spent).
// The usage is the agent's final report when it gave one, else its last running report (the
// engine's).
func (sv *supervisor) failBudget(ctx context.Context, a *attemptRun, br engine.Breach, res domain.WorkerResult) error {
	f := domain.Failure{Kind: domain.FailureBudget, Tool: "budget", Summary: br.Message(),
		Diagnostic: "stopped by the scheduler when the agent's reported usage crossed the budget"}
	_, err := sv.eng.Fail(ctx, a.fence, engine.FailRequest{Failure: f, Usage: res.Usage, Summary: f.Summary})
	return err
}

// price fills in the cost of a final usage the agent reported without one (Codex).
func (sv *supervisor) price(a *attemptRun, u *domain.Usage) *domain.Usage {
	if u == nil {
		return nil
	}
	p, _ := sv.prices.Load().Price(a.model(), *u)
	return &p
}

// model is the model the attempt runs, for the price table: the one dispatch chose, else the
// profile's default ("" when neither: only a "*" price applies).
func (a *attemptRun) model() string {
	if a.rec.Model != "" {
		return a.rec.Model
	}
	if len(a.profile.Models) > 0 {
		return a.profile.Models[0]
	}
	return ""
}
