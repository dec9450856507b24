package scheduler

import (
	"context"
	"fmt"
	"runtime"

	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/load"
	"github.com/shirou/gopsutil/v4/mem"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// voyageHold holds missions of a voyage whose requirements changed, or whose cost reached its
// limit (raising an escalation to the Main Agent once).
func (s *Scheduler) voyageHold(ctx context.Context, pc *planContext, m *engine.Mission) string {
	if m.VoyageID == "" {
		return ""
	}
	v, ok := pc.voyages[m.VoyageID]
	if !ok {
		d, err := s.eng.VoyageStatus(ctx, m.VoyageID)
		if err != nil {
			return ""
		}
		v = d.Voyage
		pc.voyages[m.VoyageID] = v
	}
	if v.RequirementsChanged && m.Attempt == 0 {
		return "the voyage's requirements changed: not started until the change is resolved"
	}
	if v.CostLimitUSD > 0 && v.Usage.CostUSD >= v.CostLimitUSD {
		s.once(ctx, "budget:"+v.ID, engine.EscalationSpec{VoyageID: v.ID, Route: engine.RouteMainAgent, Kind: "budget",
			Reason:           fmt.Sprintf("voyage %s (%s) spent $%.4f of its $%.4f limit: no new attempts start", v.ID, v.Title, v.Usage.CostUSD, v.CostLimitUSD),
			DecisionRequired: "raise the voyage's cost limit, or cancel the voyage",
			SafeNextStep:     "cancel_voyage " + v.ID})
		return fmt.Sprintf("the voyage's cost limit is reached ($%.4f of $%.4f)", v.Usage.CostUSD, v.CostLimitUSD)
	}
	if m.CostLimitUSD > 0 && m.Usage.CostUSD >= m.CostLimitUSD {
		return fmt.Sprintf("the mission's cost limit is reached ($%.4f of $%.4f)", m.Usage.CostUSD, m.CostLimitUSD)
	}
	return ""
}

// once raises an escalation unless this process already raised one under key.
func (s *Scheduler) once(ctx context.Context, key string, spec engine.EscalationSpec) {
	s.mu.Lock()
	done := s.notified[key]
	s.notified[key] = true
	s.mu.Unlock()
	if done {
		return
	}
	if _, err := s.eng.Escalate(ctx, spec, "scheduler"); err != nil {
		s.log.Warn("escalation not raised", "key", key, "err", err)
	}
}

// resourcesLow says which resource is below its threshold ("" when none): new dispatch waits,
// running work goes on.
func (s *Scheduler) resourcesLow() string {
	r := s.cfg.Resources
	if r.MaxLoadPerCPU > 0 {
		if avg, err := load.Avg(); err == nil && avg.Load1/float64(s.cpus()) > r.MaxLoadPerCPU {
			return fmt.Sprintf("CPU load %.2f per CPU is above %.2f", avg.Load1/float64(s.cpus()), r.MaxLoadPerCPU)
		}
	}
	if r.MinFreeMemMB > 0 {
		if vm, err := mem.VirtualMemory(); err == nil && vm.Available/(1<<20) < r.MinFreeMemMB {
			return fmt.Sprintf("available memory %d MB is below %d MB", vm.Available/(1<<20), r.MinFreeMemMB)
		}
	}
	if r.MinFreeDiskMB > 0 {
		if du, err := disk.Usage(s.cfg.DataDir); err == nil && du.Free/(1<<20) < r.MinFreeDiskMB {
			return fmt.Sprintf("free disk %d MB in %s is below %d MB", du.Free/(1<<20), s.cfg.DataDir, r.MinFreeDiskMB)
		}
	}
	return ""
}

func (s *Scheduler) cpus() int { return runtime.NumCPU() }

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
