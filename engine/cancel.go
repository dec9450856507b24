package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"slices"
	"time"
)

// Cancel cancels a mission that is not terminal (skip also marks it skipped: given up without
// failing). A leased or running attempt loses its lease at once (its agent's next call gets
// ErrLeaseLost; the scheduler stops its process). Hard dependents are blocked naming it.
func (e *Engine) Cancel(ctx context.Context, missionID, reason string, skip bool, actor string) (domain.Mission, error) {
	var m domain.Mission
	if err := domain.CheckID("mission_id", domain.PrefixMission, missionID); err != nil {
		return m, err
	}
	err := e.update(ctx, actor, func(o *op) error {
		var err error
		if m, err = o.get(missionID); err != nil {
			return err
		}
		return o.cancel(&m, reason, skip)
	})
	return m, err
}

func (o *op) cancel(m *domain.Mission, reason string, skip bool) error {
	if m.State.Terminal() {
		return &domain.TransitionError{MissionID: m.ID, Op: "cancel", State: m.State}
	}
	if m.State.Leased() {
		if err := o.endAttempt(m, domain.OutcomeCancelled, nil, nil, reason); err != nil {
			return err
		}
	}
	kind := domain.DecisionCancel
	if skip {
		kind = domain.DecisionSkip
	}
	if m.State == domain.StateBlocked && m.EscalationID != "" {
		if err := o.resolveFor(m.EscalationID, m.ID, string(kind)); err != nil {
			return err
		}
	}
	m.Decision = &domain.Decision{Kind: kind, Reason: orDefault(reason, "cancelled by "+orDefault(o.actor, "a caller")), At: o.now}
	m.Skipped, m.FinishedAt, m.Preempt, m.WaitReason = skip, o.now, false, ""
	m.Lease.ExpiresAt = time.Time{}
	if err := o.move(m, domain.StateCancelled, "cancel", "mission.cancelled", map[string]any{"reason": reason, "skipped": skip}); err != nil {
		return err
	}
	if err := o.detachWriteArea(m); err != nil {
		return err
	}
	if err := o.propagateEnd(m); err != nil {
		return err
	}
	if err := o.cancelDebuggers(m); err != nil {
		return err
	}
	return o.childEnded(m)
}

// cancelDebuggers cancels the unfinished debugger missions about m (kind debug, subject m):
// they exist only to find why m failed, so a cancelled m leaves them nothing to do, and
// left alone they would run, and spend, for nobody. Each says why in its decision.
func (o *op) cancelDebuggers(m *domain.Mission) error {
	kids, err := o.tx.MissionList(o.ctx, MissionFilter{SubjectID: m.ID, Kind: domain.KindDebug, Limit: 1000})
	if err != nil {
		return fmt.Errorf("debugger missions of %s: %w", m.ID, err)
	}
	for i := range kids {
		if kids[i].State.Terminal() {
			continue
		}
		if err := o.cancel(&kids[i], "the mission it debugs, "+m.ID+", was cancelled", false); err != nil {
			return err
		}
	}
	return nil
}

// resolveFor closes escalation escID when m was its only blocked mission. An escalation
// already gone (pruned by retention) has nothing to close; a mission of it that is gone
// blocks nobody; any other read error aborts the transaction.
func (o *op) resolveFor(escID, missionID, action string) error {
	esc, err := o.tx.EscalationGet(o.ctx, escID)
	if errors.Is(err, domain.ErrNotFound) {
		o.e.log.Debug("escalation to resolve is gone", "escalation_id", escID, "mission_id", missionID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("resolve escalation %s for %s: %w", escID, missionID, err)
	}
	if esc.State != domain.EscalationOpen {
		return nil
	}
	for _, id := range esc.MissionIDs {
		if id == missionID {
			continue
		}
		other, err := o.get(id)
		if errors.Is(err, domain.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("resolve escalation %s for %s: %w", escID, missionID, err)
		}
		if other.State == domain.StateBlocked && other.EscalationID == escID {
			return nil // still blocks someone else
		}
	}
	return o.closeEscalation(&esc, action, "")
}

// CancelVoyage cancels every mission of a voyage that is not terminal, then the voyage.
func (e *Engine) CancelVoyage(ctx context.Context, voyageID, reason, actor string) (domain.Voyage, error) {
	var v domain.Voyage
	if err := domain.CheckID("voyage_id", domain.PrefixVoyage, voyageID); err != nil {
		return v, err
	}
	err := e.update(ctx, actor, func(o *op) error {
		var err error
		if v, err = o.tx.VoyageGet(o.ctx, voyageID); err != nil {
			return &domain.NotFoundError{Kind: "voyage", ID: voyageID}
		}
		if v.State == domain.VoyageCompleted || v.State == domain.VoyageCancelled {
			return domain.Invalid("voyage_id", fmt.Sprintf("voyage %s is already %s", voyageID, v.State), "")
		}
		ms, err := o.tx.VoyageMissions(o.ctx, voyageID)
		if err != nil {
			return err
		}
		for i := range ms {
			m, err := o.get(ms[i].ID) // re-read: cancelling one may have blocked another
			if err != nil {
				return fmt.Errorf("cancel voyage %s: %w", voyageID, err)
			}
			if m.State.Terminal() {
				continue
			}
			if err := o.cancel(&m, "voyage cancelled: "+reason, false); err != nil {
				return err
			}
		}
		v, err = o.tx.VoyageGet(o.ctx, voyageID)
		if err != nil {
			return err
		}
		prev := v.State
		v.State, v.SettledAt, v.UpdatedAt = domain.VoyageCancelled, o.now, o.now
		if err := o.saveVoyage(&v, prev, "cancel"); err != nil {
			return err
		}
		return o.emit("voyage.cancelled", nil, v.ID, map[string]any{"from": prev, "to": domain.VoyageCancelled, "reason": reason})
	})
	return v, err
}

// Retry reopens a failed, blocked or cancelled mission with a fresh retry budget, and reopens
// the missions its failure had blocked (design brief §4).
func (e *Engine) Retry(ctx context.Context, missionID, actor string) (domain.Mission, error) {
	var m domain.Mission
	if err := domain.CheckID("mission_id", domain.PrefixMission, missionID); err != nil {
		return m, err
	}
	err := e.update(ctx, actor, func(o *op) error {
		var err error
		if m, err = o.get(missionID); err != nil {
			return err
		}
		if !m.State.Retryable() {
			return &domain.TransitionError{MissionID: m.ID, Op: "retry", State: m.State}
		}
		if m.State == domain.StateBlocked && m.EscalationID != "" {
			if err := o.resolveFor(m.EscalationID, m.ID, ResolveRetry); err != nil {
				return err
			}
		}
		m.AttemptsUsed, m.NotBefore, m.EscalationID, m.LastSignature = 0, time.Time{}, "", ""
		if err := o.reopen(&m, "retry", "mission.retried", nil); err != nil {
			return err
		}
		if err := o.reopenBlockedBy(m.ID); err != nil {
			return err
		}
		return o.reopenVoyage(m.VoyageID, "")
	})
	return m, err
}

// reopenBlockedBy reopens missions blocked because causeID failed or was cancelled, and
// resolves those escalations.
func (o *op) reopenBlockedBy(causeID string) error {
	escs, err := o.tx.EscalationList(o.ctx, EscalationFilter{State: domain.EscalationOpen, CauseID: causeID, Limit: 1000})
	if err != nil {
		return err
	}
	for i := range escs {
		if err := o.closeEscalation(&escs[i], ResolveRetry, "upstream "+causeID+" retried"); err != nil {
			return err
		}
		for _, id := range escs[i].MissionIDs {
			if err := o.applyResolution(id, escs[i].ID, ResolveRetry, "upstream retried"); err != nil {
				return err
			}
		}
	}
	return nil
}

// propagateEnd blocks every pending or interrupted mission that transitively hard-depends on
// m, which just failed or was cancelled: they could never run (shared/cases B14). One
// escalation names m as the cause and lists them.
func (o *op) propagateEnd(m *domain.Mission) error {
	var blocked []*domain.Mission
	seen := map[string]bool{m.ID: true}
	queue := []string{m.ID}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		deps, err := o.tx.DependentsOf(o.ctx, id)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if d.Type != domain.EdgeHard || seen[d.MissionID] {
				continue
			}
			seen[d.MissionID] = true
			queue = append(queue, d.MissionID)
			dm, err := o.get(d.MissionID)
			if err != nil {
				return err
			}
			if dm.State == domain.StatePending || dm.State == domain.StateInterrupted {
				blocked = append(blocked, &dm)
			}
		}
	}
	if len(blocked) == 0 {
		return nil
	}
	return o.blockForUpstream(blocked, m)
}

// blockForUpstream blocks ms because upstream failed or was cancelled.
func (o *op) blockForUpstream(ms []*domain.Mission, upstream *domain.Mission) error {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	slices.Sort(ids)
	why := fmt.Sprintf("upstream mission %s (%s) is %s", upstream.ID, upstream.Title, upstream.State)
	if upstream.Decision != nil {
		why += ": " + upstream.Decision.Reason
	}
	esc, err := o.raise(domain.Escalation{MissionIDs: ids, VoyageID: upstream.VoyageID, Route: domain.RouteMainAgent,
		Kind: "upstream_failed", CauseID: upstream.ID, Reason: why,
		DecisionRequired: fmt.Sprintf("retry %s after fixing its cause, or skip/cancel the %d mission(s) that need it", upstream.ID, len(ids)),
		Evidence:         failureEvidenceOf(upstream), SafeNextStep: "retry_mission " + upstream.ID})
	if err != nil {
		return err
	}
	for _, m := range ms {
		m.EscalationID = esc.ID
		if err := o.move(m, domain.StateBlocked, "upstream_failed", "mission.blocked", map[string]any{
			"escalation_id": esc.ID, "reason": why, "upstream": upstream.ID}); err != nil {
			return err
		}
	}
	return nil
}

func failureEvidenceOf(m *domain.Mission) []string {
	if m.LastFailure == nil {
		return nil
	}
	return failureEvidence(*m.LastFailure)
}

// childEnded tells a parent waiting for its children that child m ended: when every child
// completed the parent becomes runnable; when m failed or was cancelled the parent blocks.
func (o *op) childEnded(m *domain.Mission) error {
	if m.ParentID == "" {
		return nil
	}
	p, err := o.get(m.ParentID)
	if errors.Is(err, domain.ErrNotFound) {
		// the parent was pruned: nobody waits for this child
		o.e.log.Debug("parent of an ended child is gone", "mission_id", m.ID, "parent_id", m.ParentID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("tell parent %s that child %s ended: %w", m.ParentID, m.ID, err)
	}
	if p.WaitReason != WaitChildren || p.State != domain.StateInterrupted {
		return nil
	}
	if m.State != domain.StateCompleted {
		return o.blockWith(&p, "block", domain.Escalation{Route: domain.RouteMainAgent, Kind: "child_failed", CauseID: m.ID,
			Reason:           fmt.Sprintf("child mission %s (%s) is %s", m.ID, m.Title, m.State),
			DecisionRequired: "retry the child, or resolve this escalation to let the parent continue without it",
			SafeNextStep:     "retry_mission " + m.ID}, nil)
	}
	done, err := o.childrenDone(p.ID)
	if err != nil || !done {
		return err
	}
	g := Guard{State: p.State, Epoch: p.Lease.Epoch}
	p.WaitReason, p.UpdatedAt = "", o.now
	if err := o.save(&p, g); err != nil {
		return err
	}
	return o.emit("mission.children_done", &p, "", nil)
}

// childrenDone reports whether every child of parentID completed.
func (o *op) childrenDone(parentID string) (bool, error) {
	cursor := ""
	for {
		kids, err := o.tx.MissionList(o.ctx, MissionFilter{ParentID: parentID, Cursor: cursor, Limit: 1000})
		if err != nil {
			return false, err
		}
		for _, k := range kids {
			if k.State != domain.StateCompleted {
				return false, nil
			}
		}
		if len(kids) < 1000 {
			return true, nil
		}
		cursor = kids[len(kids)-1].ID
	}
}
