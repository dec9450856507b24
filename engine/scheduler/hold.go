package scheduler

import (
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// yieldable reports whether a running mission can be asked to yield: a pull-mode agent (its
// heartbeat answers yield) or a managed ndjson agent this process supervises (agent.yield).
func (s *Scheduler) yieldable(m *domain.Mission) bool {
	if runOf(m).Mode == ModePull {
		return true
	}
	return s.sup.canYield(m.ID)
}

// askYield tells a managed agent about its preemption (pull-mode agents learn it from their
// next heartbeat).
func (s *Scheduler) askYield(missionID string) {
	s.sup.askYield(missionID, "preempted by an urgent mission")
}
