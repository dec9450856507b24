package scheduler

import (
	"context"
	"errors"
	"time"
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
	began := time.Now()
	lead, err := s.leader.RunOnce(ctx)
	if err != nil || !lead {
		return rep, err
	}
	defer func() { s.cfg.Metrics.TickObserved(time.Since(began)) }()
	rep.Leader = true
	var errs []error
	if s.rec.pending() {
		s.setPhase(PhaseLoading)
	}
	rr, err := s.rec.RunOnce(ctx)
	rep.Recovered, rep.Reaped = rr.Recovered, rr.Reaped
	errs = append(errs, err)
	s.setPhase(PhaseMonitoring)
	errs = append(errs, s.sup.RunOnce(ctx))
	s.setPhase(PhasePlanning)
	tp, err := s.planAndDispatch(ctx, &rep)
	errs = append(errs, err)
	s.setPhase(PhaseContinuing)
	errs = append(errs, s.settle(ctx, &rep, tp))
	s.ws.kick()
	if s.sup.busy() {
		s.setPhase(PhaseMonitoring)
	} else {
		s.setPhase(PhaseIdle)
	}
	return rep, errors.Join(errs...)
}
