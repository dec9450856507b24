package scheduler

import (
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// yieldable reports whether a running mission can be asked to yield: a pull-mode agent (its
// heartbeat answers yield) or a managed ndjson agent this process launched (agent.yield).
func (s *Scheduler) yieldable(m *domain.Mission) bool {
	if runOf(m).Mode == ModePull {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.procs[m.ID]
	return ok && a.proc.CanYield()
}

// askYield tells a managed agent about its preemption (pull-mode agents learn it from their
// next heartbeat).
func (s *Scheduler) askYield(missionID string) {
	s.mu.Lock()
	a, ok := s.procs[missionID]
	s.mu.Unlock()
	if ok {
		a.proc.RequestYield("preempted by an urgent mission")
	}
}
