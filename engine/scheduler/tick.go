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
//
// On a single node the leader does everything and a follower nothing. In cluster mode
// (Config.Node) the process that runs its node re-attaches, supervises and dispatches its own
// agents, and the leader among the nodes adds the cluster-wide duties: the reaper and missed
// deadlines, no_agent escalations, the holds and the wave, landing, voyage settlement and the
// history retention.
func (s *Scheduler) RunOnce(ctx context.Context) (TickReport, error) {
	var rep TickReport
	began := time.Now()
	local, cluster, err := s.duties(ctx)
	if err != nil || !local {
		return rep, err
	}
	defer func() { s.cfg.Metrics.TickObserved(time.Since(began)) }()
	rep.Leader = cluster
	var errs []error
	if s.rec.pending() {
		s.setPhase(PhaseLoading)
	}
	rr, err := s.rec.RunOnce(ctx, cluster)
	rep.Recovered, rep.Reaped = rr.Recovered, rr.Reaped
	errs = append(errs, err)
	s.setPhase(PhaseMonitoring)
	errs = append(errs, s.sup.RunOnce(ctx))
	s.setPhase(PhasePlanning)
	tp, err := s.planAndDispatch(ctx, &rep, cluster)
	errs = append(errs, err)
	if cluster {
		s.setPhase(PhaseContinuing)
		errs = append(errs, s.settle(ctx, &rep, tp))
	}
	s.ws.kick()
	if s.sup.busy() {
		s.setPhase(PhaseMonitoring)
	} else {
		s.setPhase(PhaseIdle)
	}
	return rep, errors.Join(errs...)
}

// duties takes or renews the leases this tick runs under and says what it does: local (this
// process's agents: re-attach, supervise, dispatch) and cluster (the cluster-wide duties). On
// a single node both are the leader lease; in cluster mode local is the node lease, and only
// a process that runs its node tries for the leader lease. A failed leader step in cluster
// mode is logged and leaves the node's own work going (cluster false this tick).
func (s *Scheduler) duties(ctx context.Context) (local, cluster bool, err error) {
	if s.node == nil {
		lead, err := s.leader.RunOnce(ctx)
		return lead, lead, err
	}
	if local, err = s.node.RunOnce(ctx); err != nil || !local {
		return false, false, err
	}
	cluster, err = s.leader.RunOnce(ctx)
	if err != nil {
		s.log.Warn("leader lease step failed; this node's own work goes on", "node", s.cfg.Node, "err", err)
	}
	return true, cluster, nil
}
