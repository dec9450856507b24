package scheduler

import (
	"context"
	"errors"

	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// monitor: stop agents whose mission is no longer theirs, renew the leases of live agents
// (the keeper does too, between ticks; the runner itself stops stalled and timed-out ones),
// reap expired leases, mark attempts that share a repository, and raise missed deadlines.
func (s *Scheduler) monitor(ctx context.Context, rep *TickReport) error {
	fences, err := s.eng.LeaseFences(ctx) // ids and epochs only: this runs every tick
	if err != nil {
		return err
	}
	live := map[domain.Fence]bool{}
	for _, f := range fences {
		live[f] = true
	}
	var errs []error
	byRepo := map[string][]*attemptRun{}
	for _, a := range s.supervised() {
		if !live[a.fence] {
			s.stopAsync(a, runner.ReasonLeaseLost) // cancelled, blocked or re-leased by someone else
			continue
		}
		byRepo[a.mission.Repository] = append(byRepo[a.mission.Repository], a)
	}
	errs = append(errs, s.renewAgents(ctx))
	for _, group := range byRepo {
		if len(group) > 1 {
			for _, a := range group {
				a.parallel.Store(true)
			}
		}
	}
	reaped, err := s.eng.ReapExpired(ctx, s.alive)
	rep.Reaped = reaped
	errs = append(errs, err)
	_, err = s.eng.EscalateMissedDeadlines(ctx)
	return errors.Join(append(errs, err)...)
}

// alive reports whether m's current attempt is a managed agent this process supervises or
// is launching right now (recovery must leave such a mission alone).
func (s *Scheduler) alive(m domain.Mission) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.launching[m.ID] {
		return true
	}
	a, ok := s.procs[m.ID]
	return ok && a.fence == m.Fence()
}

func (s *Scheduler) supervised() []*attemptRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*attemptRun, 0, len(s.procs))
	for _, a := range s.procs {
		out = append(out, a)
	}
	return out
}
