package scheduler

import (
	"context"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// nodeLandings keeps the landing moves this node makes in cluster mode: those of missions
// whose attempt ran here (their workspace is on this node's disk, where pending work is
// committed and the checks run), and, when this node leads, those of missions whose node is
// not running any more (their branch lands as it is: lander.landBatch marks them Elsewhere).
// A move of a live other node's mission is that node's. When the node list cannot be read the
// leader lands only its own and says why; the next tick tries again.
func (s *Scheduler) nodeLandings(ctx context.Context, groups []planner.LandingGroup, leading bool) []planner.LandingGroup {
	var live map[string]bool
	if leading && s.othersLand(groups) { // the node list is read only when another node's move is in the plan
		ns, err := s.eng.Nodes(ctx)
		if err != nil {
			s.log.Warn("landings of stopped nodes wait: the node list could not be read", "err", err)
		} else {
			live = liveNodes(ns, s.eng.Now())
		}
	}
	var out []planner.LandingGroup
	for _, g := range groups {
		kept := g
		kept.Moves = nil
		for _, mv := range g.Moves {
			n := mv.Mission.Node
			if n == s.cfg.Node || (live != nil && !live[n]) {
				kept.Moves = append(kept.Moves, mv)
			}
		}
		if len(kept.Moves) > 0 {
			out = append(out, kept)
		}
	}
	return out
}

// othersLand reports whether a move of the plan is of a mission another node ran.
func (s *Scheduler) othersLand(groups []planner.LandingGroup) bool {
	for _, g := range groups {
		for _, mv := range g.Moves {
			if mv.Mission.Node != s.cfg.Node {
				return true
			}
		}
	}
	return false
}

// liveNodes is the set of node names whose lease is current at now.
func liveNodes(ns []engine.Node, now time.Time) map[string]bool {
	live := map[string]bool{}
	for _, n := range ns {
		if n.Live(now) {
			live[n.Name] = true
		}
	}
	return live
}
