package engine

import (
	"context"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"time"
)

// DefaultAbandonLimit is Options.AbandonLimit's default.
const DefaultAbandonLimit = 3

// EscalationAbandoned is the escalation kind of a mission blocked after AbandonLimit
// abandoned attempts in a row.
const EscalationAbandoned = "abandoned"

// abandon ends m's current attempt as abandoned (docs/state-machine.md, "Abandoned
// attempts"): it costs no retry budget and no backoff, and the mission goes back to pending
// (interrupted with a checkpoint). It counts in m.Abandons; the AbandonLimit-th in a row
// blocks the mission with an escalation instead, so a mission nobody keeps can neither fail
// nor loop forever.
func (o *op) abandon(m *domain.Mission, why string) error {
	if err := o.endAttempt(m, domain.OutcomeAbandoned, nil, nil, why); err != nil {
		return err
	}
	m.Abandons++
	owner := m.Lease.Owner
	m.Lease.Owner, m.Lease.ExpiresAt, m.Preempt, m.Contacted = "", time.Time{}, false, false
	limit := o.e.opt.AbandonLimit
	data := map[string]any{"reason": why, "agent": owner, "abandons": m.Abandons, "abandon_limit": limit}
	if m.Abandons >= limit {
		ev, err := o.abandonEvidence(m.ID, limit)
		if err != nil {
			return err
		}
		return o.blockWith(m, "expire", domain.Escalation{Route: domain.RouteMainAgent, Kind: EscalationAbandoned,
			Reason:           fmt.Sprintf("agents claim this mission and vanish: its last %d attempts ended before their agent was heard from (no heartbeat, progress, checkpoint or result)", m.Abandons),
			DecisionRequired: "find out why agents that claim this mission never report back (they crash on its brief, cannot reach the server, or heartbeat less often than heartbeat_seconds), then retry, skip or cancel it",
			Evidence:         ev, SafeNextStep: "resolve_escalation with action retry once agents can keep their lease; abandoned attempts never cost retry budget"}, data)
	}
	to := domain.StatePending
	if m.Checkpoint != nil {
		to = domain.StateInterrupted
	}
	return o.move(m, to, "expire", "lease.abandoned", data)
}

// abandonEvidence names the last n abandoned attempts of a mission (newest last).
func (o *op) abandonEvidence(missionID string, n int) ([]string, error) {
	atts, err := o.tx.AttemptList(o.ctx, missionID)
	if err != nil {
		return nil, err
	}
	var ev []string
	for _, a := range atts {
		if a.Outcome == domain.OutcomeAbandoned {
			ev = append(ev, fmt.Sprintf("attempt %d (agent %s, epoch %d): %s", a.Attempt, orDefault(a.Agent, "unknown"), a.Epoch, a.Summary))
		}
	}
	if len(ev) > n {
		ev = ev[len(ev)-n:]
	}
	return ev, nil
}

// abandonClaim abandons the attempt a claim acquired when its result cannot reach the caller
// (the request ended first). Fenced by the epoch; a lease already lost changes nothing.
func (e *Engine) abandonClaim(ctx context.Context, f domain.Fence, why string) error {
	err := e.update(context.WithoutCancel(ctx), "scheduler", func(o *op) error {
		m, err := o.fenced(f)
		if err != nil {
			return err
		}
		return o.abandon(&m, why)
	})
	e.forgetRenewal(f)
	return err
}
