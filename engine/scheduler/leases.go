package scheduler

import (
	"context"
	"errors"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// renewEvery is how often the lease of a live managed agent is renewed: RenewEvery, but at
// least three times per lease TTL so that a renewal or two may fail without losing it.
func (sv *supervisor) renewEvery() time.Duration {
	return min(sv.cfg.RenewEvery, sv.eng.LeaseTTL()/3)
}

// renewAgents renews the leases of supervised agents whose renewal is due (the agent's own
// events renew it too, see beat). A lease that is not ours any more stops the agent.
func (sv *supervisor) renewAgents(ctx context.Context) error {
	now := sv.cfg.Now()
	every := sv.renewEvery()
	var errs []error
	for _, a := range sv.supervised() {
		a.mu.Lock()
		due := a.stopping == "" && now.Sub(a.lastBeat) >= every
		if due {
			a.lastBeat = now
		}
		a.mu.Unlock()
		if !due {
			continue
		}
		ans, err := sv.eng.RenewLease(ctx, a.fence)
		switch {
		case errors.Is(err, domain.ErrLeaseLost):
			sv.stopAsync(a, runner.ReasonLeaseLost)
		case err != nil:
			errs = append(errs, err)
		default:
			sv.renewed(a, ans.ExpiresAt)
		}
	}
	return errors.Join(errs...)
}

// fenceMargin is how long before its lease expires an agent whose lease could not be renewed
// is stopped: the SIGTERM grace of its profile and a safety margin, so that its process group
// is gone before anyone else may take the mission (shared/cases B12).
func (sv *supervisor) fenceMargin(a *attemptRun) time.Duration {
	return a.profile.Grace.D() + max(time.Second, sv.eng.LeaseTTL()/10)
}

// renewed records the lease expiry a successful start or renewal returned and moves the
// attempt's fence: a timer, independent of the database, that stops the agent fenceMargin
// before the lease would expire without a further renewal (a blocked or failing database, a
// stuck process) — the scheduler cannot keep the mission, so the agent must not go on with it.
func (sv *supervisor) renewed(a *attemptRun, expires time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if expires.Before(a.expires) || a.detached || a.stopping != "" {
		return
	}
	a.expires = expires
	wait := time.Until(expires.Add(-sv.fenceMargin(a)))
	if a.fenceTimer == nil {
		a.fenceTimer = time.AfterFunc(wait, func() { sv.fenceFired(a) })
		return
	}
	a.fenceTimer.Reset(wait)
}

// fenceFired stops the agent when its lease is about to expire unrenewed.
func (sv *supervisor) fenceFired(a *attemptRun) {
	a.mu.Lock()
	left := time.Until(a.expires)
	margin := sv.fenceMargin(a)
	if a.detached || a.stopping != "" {
		a.mu.Unlock()
		return
	}
	if left > margin { // renewed meanwhile: the timer was reset late
		a.fenceTimer.Reset(left - margin)
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	if sv.renewedElsewhere(a, margin) {
		return
	}
	a.mu.Lock()
	if a.detached || a.stopping != "" {
		a.mu.Unlock()
		return
	}
	a.fenced = true
	a.mu.Unlock()
	sv.log.Warn("lease about to expire without renewal: stopping the agent before anyone else may take the mission",
		"mission_id", a.fence.MissionID, "epoch", a.fence.Epoch, "expires_in", left.Round(time.Millisecond))
	sv.stopAsync(a, runner.ReasonLeaseLost)
}

// renewedElsewhere reads the lease as the database has it (a read is not held up by a
// blocked writer) and reports whether it was renewed beyond what this process knows — by
// another process that took the lead and re-attached the agent while this one was frozen
// (SIGSTOP, a stalled machine), or by this process's own delayed write. Then the fence moves
// and the agent is left alone; this process steps back at its next leadership check. A lease
// that is gone, re-leased or still about to expire (or a failed read) answers false: stop.
func (sv *supervisor) renewedElsewhere(a *attemptRun, margin time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	d, err := sv.eng.GetMission(ctx, a.fence.MissionID)
	if err != nil {
		return false
	}
	m := d.Mission
	if m.Lease.Epoch != a.fence.Epoch || !m.State.Leased() || time.Until(m.Lease.ExpiresAt) <= margin {
		return false
	}
	sv.log.Info("the agent's lease was renewed meanwhile (by the process that leads now, or a delayed write of ours); leaving the agent alone",
		"mission_id", m.ID, "epoch", m.Lease.Epoch, "expires_in", time.Until(m.Lease.ExpiresAt).Round(time.Millisecond))
	sv.renewed(a, m.Lease.ExpiresAt)
	return true
}

// detach stops watching the attempt (the agent goes on; the next leader collects it).
func (a *attemptRun) detach() {
	a.mu.Lock()
	a.detached = true
	if a.fenceTimer != nil {
		a.fenceTimer.Stop()
	}
	a.mu.Unlock()
	a.proc.Detach()
}

// ended releases the attempt's fence timer once its agent is gone.
func (a *attemptRun) ended() {
	a.mu.Lock()
	if a.fenceTimer != nil {
		a.fenceTimer.Stop()
	}
	a.mu.Unlock()
}
