package scheduler

import (
	"context"
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// voyageHold holds missions of a voyage whose requirements changed or whose cost (or the
// mission's own) reached its limit: engine.VoyageHold, the rule the voyage's settlement
// applies too.
func (s *Scheduler) voyageHold(ctx context.Context, pc *planContext, m *engine.Mission) (*engine.Reason, error) {
	if m.VoyageID == "" {
		return engine.VoyageHold(nil, m), nil
	}
	v, ok := pc.voyages[m.VoyageID]
	if !ok {
		var err error
		if v, err = s.eng.Voyage(ctx, m.VoyageID); err != nil {
			return nil, fmt.Errorf("voyage %s of %s: %w", m.VoyageID, m.ID, err)
		}
		pc.voyages[m.VoyageID] = v
	}
	return engine.VoyageHold(&v, m), nil
}

// maybePreempt: an urgent mission that waits only for a slot asks the lowest-priority running
// mission (less urgent than it) to checkpoint and yield at its next boundary; at most one
// request per tick.
func (s *Scheduler) maybePreempt(ctx context.Context, pc *planContext, m *engine.Mission, leased []engine.Mission) {
	if pc.preempted || m.Priority > s.cfg.UrgentPriority {
		return
	}
	var victim *engine.Mission
	for i := range leased {
		o := &leased[i]
		if o.State != engine.StateRunning || o.Preempt || o.Priority <= m.Priority || !s.yieldable(o) {
			continue
		}
		if victim == nil || o.Priority > victim.Priority || (o.Priority == victim.Priority && o.ID > victim.ID) {
			victim = o
		}
	}
	if victim == nil {
		return
	}
	pc.preempted = true
	if err := s.eng.Preempt(ctx, victim.ID, fmt.Sprintf("urgent mission %s (priority %d) waits for a slot", m.ID, m.Priority), "scheduler"); err != nil {
		s.log.Warn("preemption not recorded", "mission_id", victim.ID, "err", err)
		return
	}
	s.askYield(victim.ID)
}

// yieldable reports whether a running mission can be asked to yield: a pull-mode agent (its
// heartbeat answers yield) or a managed ndjson agent this process launched (agent.yield).
func (s *Scheduler) yieldable(m *engine.Mission) bool {
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
