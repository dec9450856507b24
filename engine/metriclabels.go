package engine

import (
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// HoldCodes are every reason code a recorded hold may carry (the held_missions gauge exports
// each, 0 included, so that a panel shows 0 rather than no data): the runnable rules'
// (Blockers), the planner's (PlannerCode) and the landing waits (domain.LandingWaitCodes).
// WhyNoLeader and WhyQueued are not among them: they are said when no plan decided.
// metriclabels_test.go checks that every Why constant is here or named as never held.
func HoldCodes() []string {
	return append([]string{WhyState, WhyPaused, WhyChildren, WhyBackoff, WhyHardDep, WhySerialized, WhyConflict,
		WhyExclusive, WhySlots, WhyResources, WhyWaitingAgent, WhyUnavailable, WhyBudget, WhyRequirements,
		WhyRateLimited}, domain.LandingWaitCodes()...)
}

// LandingResults are every result a landing ends with (worktree.LandStatuses, as the
// scheduler reports them to its metrics), for a list that names each.
func LandingResults() []string {
	var out []string
	for _, s := range worktree.LandStatuses() {
		out = append(out, string(s))
	}
	return out
}
