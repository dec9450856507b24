package runner

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// ErrStillRunning is returned by Stop when the agent's process group survived SIGKILL for
// killWait (a process stuck in the kernel).
var ErrStillRunning = errors.New("agent process group still exists after SIGKILL")

// supervise runs the profile's timers: the soft timeout pings the agent once and records an
// event; the stall threshold (no output for that long) pings it and records an event, once
// per silence; the hard timeout and the stall timeout (no output for that long) stop it.
// Timeouts count from when the agent started (pid.json), so they survive a re-attach; the
// silence counts from the last output this process saw (or from the attach).
func (p *Process) supervise() {
	defer close(p.superDone)
	prof := p.spec.Profile
	started := p.rec.StartedAt
	timer := func(d time.Duration) <-chan time.Time {
		if d <= 0 {
			return nil
		}
		return time.After(max(time.Until(started.Add(d)), 0))
	}
	soft, hard := timer(prof.SoftTimeout.D()), timer(prof.HardTimeout.D())
	st := newStallWatch(prof.StallThreshold.D(), prof.StallTimeout.D())
	stall := st.next(0)
	for {
		select {
		case <-p.exited:
			return
		case <-p.detached:
			return
		case <-soft:
			soft = nil
			p.ping()
			ev := Event{Kind: EventSoftTimeout, Time: p.r.cfg.Now()}
			p.log.Info("soft timeout: agent pinged", "soft_timeout", prof.SoftTimeout.D())
			select {
			case p.events <- ev:
			case <-p.exited:
				return
			case <-p.detached:
				return
			}
		case <-hard:
			hard = nil
			p.log.Warn("hard timeout: stopping agent", "hard_timeout", prof.HardTimeout.D())
			p.stopInBackground(ReasonHardTimeout)
		case <-stall:
			now := p.r.cfg.Now()
			last := p.LastOutput()
			idle := now.Sub(last)
			switch st.check(last, idle) {
			case stallStop:
				stall = nil
				p.log.Warn("agent silent past its stall timeout: stopping it", "idle", idle.Round(time.Millisecond),
					"stall_timeout", st.timeout)
				p.stopInBackground(ReasonStalled)
				continue
			case stallPing:
				p.ping()
				p.log.Warn("agent stalled: no output, pinged", "idle", idle.Round(time.Millisecond),
					"stall_threshold", st.threshold, "stall_timeout", st.timeout)
				select {
				case p.events <- Event{Kind: EventStalled, Time: now, Idle: idle}:
				case <-p.exited:
					return
				case <-p.detached:
					return
				}
			}
			stall = st.next(idle)
		}
	}
}

// stopInBackground stops the agent without blocking supervision; errors are logged
// (nobody else is there to receive them).
func (p *Process) stopInBackground(reason string) {
	go func() {
		if err := p.Stop(reason); err != nil {
			p.log.Error("stopping agent", "reason", reason, "err", err)
		}
	}()
}

// ping sends agent.ping to an ndjson agent, numbered 1, 2, … within the attempt.
func (p *Process) ping() {
	if p.stdin != nil {
		p.stdin.send(agent.Ping{Type: agent.TypePing, Seq: p.pings.Add(1)})
	}
}

// Stop ends the agent (design brief §7): agent.cancel on its stdin (runtime ndjson, while
// this Runner launched it), SIGTERM to its process group, the profile's grace period,
// SIGKILL to the group. It returns only when no process of the group is left, so the
// mission can safely be handed to someone else; the Outcome follows through Wait, with
// Exit.Reason set to reason (the first reason given wins). Stopping an agent that already
// ended does nothing. Errors: ErrStillRunning.
func (p *Process) Stop(reason string) error {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.ended() {
		return nil
	}
	p.reason.CompareAndSwap(nil, &reason)
	pgid := p.rec.PGID
	if p.stdin != nil {
		p.stdin.send(agent.Cancel{Type: agent.TypeCancel, Reason: reason})
	}
	if err := signalGroup(pgid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop agent group %d: %w", pgid, err)
	}
	if p.waitGroupGone(pgid, p.spec.Profile.Grace.D()) {
		return nil
	}
	p.log.Warn("agent still running after the grace period: SIGKILL", "grace", p.spec.Profile.Grace.D())
	if err := signalGroup(pgid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill agent group %d: %w", pgid, err)
	}
	if p.waitGroupGone(pgid, killWait) {
		return nil
	}
	return fmt.Errorf("stop agent group %d: %w", pgid, ErrStillRunning)
}

// ended reports whether the agent's group is known to be gone (the shim recorded the end),
// or, for an attached Process whose shim and agent are both gone, cannot be ours any more.
func (p *Process) ended() bool {
	select {
	case <-p.exited:
		return true
	default:
	}
	// Attached, with the shim and the agent both gone: the group id may already belong to
	// someone else, so it is never signalled.
	return !p.launched && !alive(p.rec.ShimPID, p.rec.ShimStart) && !alive(p.rec.AgentPID, p.rec.AgentStart)
}

// waitGroupGone polls until group pgid has no process left, or d passed.
func (p *Process) waitGroupGone(pgid int, d time.Duration) bool { return waitGone(pgid, d) }
