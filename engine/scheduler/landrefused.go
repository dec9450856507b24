package scheduler

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// landingRefused handles a landing the workspace manager refused (worktree.LandRefused): the
// attempt's branch adds symbolic links that point outside the repository (bug case B68: an
// agent's `ln -s <repo>/node_modules node_modules`, committed). Nothing moved. The landing is
// recorded conflicted, which waits for a decision, and the Main Agent gets an escalation
// naming each link and its target: no repair mission, because a repairer would start from
// the same branch and nothing tells it the link is the problem.
func (lr *lander) landingRefused(ctx context.Context, m *domain.Mission, record domain.Landing, l worktree.Landing) error {
	if _, err := lr.eng.RecordLanding(ctx, record, domain.LandingConflicted); err != nil {
		return err
	}
	links := make([]string, len(l.EscapingLinks))
	for i, k := range l.EscapingLinks {
		links[i] = k.String()
	}
	lr.once(ctx, engine.EscalationSpec{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID, Route: domain.RouteMainAgent,
		Kind: "symlink", Reason: fmt.Sprintf("mission %s (%s) was not landed on %s: its branch adds symbolic links that point outside the repository (%s)",
			m.ID, m.Title, record.TargetBranch, strings.Join(links, ", ")),
		DecisionRequired: "retry the mission telling its agent not to commit links out of the repository (resolve_escalation retry), " +
			"or remove the links from the mission's branch by hand (git rm --cached <path>, commit) and retry, or cancel it",
		Evidence: links, SafeNextStep: "get_mission_diff " + m.ID})
	return nil
}
