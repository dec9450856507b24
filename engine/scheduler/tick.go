package scheduler

import (
	"context"
	"errors"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// TickReport says what one tick did.
type TickReport struct {
	Leader     bool
	Recovered  int
	Reaped     []string
	Dispatched []string
	Held       int
	Settled    []string
}

// RunOnce runs one tick (see the package doc). Tests call it directly with a fake clock.
// Errors of one step do not stop the others; they are joined.
func (s *Scheduler) RunOnce(ctx context.Context) (TickReport, error) {
	var rep TickReport
	lead, err := s.lead(ctx)
	if err != nil || !lead {
		return rep, err
	}
	rep.Leader = true
	var errs []error
	s.mu.Lock()
	recovered := s.recovered
	s.mu.Unlock()
	if !recovered {
		s.setPhase(PhaseLoading)
		n, err := s.recover(ctx)
		rep.Recovered = n
		errs = append(errs, err)
	}
	s.setPhase(PhaseMonitoring)
	errs = append(errs, s.monitor(ctx, &rep))
	s.setPhase(PhasePlanning)
	tp, err := s.planAndDispatch(ctx, &rep)
	errs = append(errs, err)
	s.setPhase(PhaseContinuing)
	errs = append(errs, s.settle(ctx, &rep, tp))
	s.maybeCleanup(ctx)
	s.mu.Lock()
	busy := len(s.procs) > 0
	s.mu.Unlock()
	if busy {
		s.setPhase(PhaseMonitoring)
	} else {
		s.setPhase(PhaseIdle)
	}
	return rep, errors.Join(errs...)
}

// lead takes or renews the leader lease. Losing it detaches every supervised agent (the new
// leader re-attaches them) and forgets recovery.
func (s *Scheduler) lead(ctx context.Context) (bool, error) {
	now := s.cfg.Now()
	s.mu.Lock()
	fresh := s.leaderEpoch != 0 && now.Sub(s.lastLead) < s.cfg.LeaderLease/5
	s.mu.Unlock()
	if fresh {
		return true, nil // renewed less than a fifth of the lease ago: no write on every wake-up
	}
	l, err := s.eng.Leadership(ctx, s.cfg.Owner, s.cfg.LeaderLease, s.Phase())
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastLead = now
	if l.Owner != s.cfg.Owner {
		if s.leaderEpoch != 0 {
			s.log.Warn("leadership lost", "leader", l.Owner, "epoch", l.Epoch)
			for _, p := range s.procs {
				p.detach()
			}
		}
		s.leaderEpoch, s.recovered = 0, false
		s.phase.Store(PhaseFollower)
		return false, nil
	}
	if s.leaderEpoch != l.Epoch {
		s.log.Info("leading the scheduler loop", "owner", s.cfg.Owner, "epoch", l.Epoch)
		s.leaderEpoch, s.recovered, s.lastHolds = l.Epoch, false, holdsUnset
	}
	return true, nil
}

// leaderFence is the leader lease this process holds (nil while it does not lead), presented
// with every acquire so that a process that lost leadership in the middle of a tick cannot
// dispatch.
func (s *Scheduler) leaderFence() *engine.LeaderFence {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leaderEpoch == 0 {
		return nil
	}
	return &engine.LeaderFence{Owner: s.cfg.Owner, Epoch: s.leaderEpoch}
}
