package engine

import (
	"context"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"slices"
	"time"
)

// EscalationSpec is a blocker report raised by a caller (the escalate tool, the scheduler).
type EscalationSpec struct {
	MissionIDs       []string     `json:"mission_ids,omitempty"`
	VoyageID         string       `json:"voyage_id,omitempty"`
	Route            domain.Route `json:"route"`
	Kind             string       `json:"kind,omitempty"`
	Reason           string       `json:"reason"`
	DecisionRequired string       `json:"decision_required"`
	Evidence         []string     `json:"evidence,omitempty"`
	SafeNextStep     string       `json:"safe_next_step,omitempty"`
}

func (s *EscalationSpec) check() error {
	if s.Route == "" {
		s.Route = domain.RouteMainAgent
	}
	if !s.Route.Valid() {
		return domain.Invalid("route", fmt.Sprintf("%q is not a route", domain.Clip(string(s.Route), 40)), "use main_agent, architect, person or debugger")
	}
	if s.Reason == "" || len(s.Reason) > 8000 {
		return domain.Invalid("reason", "must be 1 to 8000 bytes", "say what blocks the work")
	}
	if s.DecisionRequired == "" || len(s.DecisionRequired) > 4000 {
		return domain.Invalid("decision_required", "must be 1 to 4000 bytes", "say what must be decided")
	}
	if len(s.Evidence) > MaxListItems || len(s.MissionIDs) > MaxMissionsPerDispatch {
		return domain.Invalid("evidence", "has too many entries", "summarise")
	}
	if s.Kind == "" {
		s.Kind = "report"
	}
	if err := domain.CheckName("kind", "escalation kinds", s.Kind); err != nil {
		return err
	}
	for i, id := range s.MissionIDs {
		if err := domain.CheckID(fmt.Sprintf("mission_ids[%d]", i), domain.PrefixMission, id); err != nil {
			return err
		}
	}
	return nil
}

// Escalate records an open escalation without changing any mission's state.
func (e *Engine) Escalate(ctx context.Context, spec EscalationSpec, actor string) (domain.Escalation, error) {
	var out domain.Escalation
	if err := spec.check(); err != nil {
		return out, err
	}
	err := e.update(ctx, actor, func(o *op) error {
		for i, id := range spec.MissionIDs {
			if err := o.checkExisting(id, fmt.Sprintf("mission_ids[%d]", i)); err != nil {
				return err
			}
		}
		if spec.VoyageID != "" {
			if _, err := o.tx.VoyageGet(o.ctx, spec.VoyageID); err != nil {
				return &domain.NotFoundError{Kind: "voyage", ID: spec.VoyageID}
			}
		}
		var err error
		out, err = o.raise(domain.Escalation{MissionIDs: spec.MissionIDs, VoyageID: spec.VoyageID, Route: spec.Route,
			Kind: spec.Kind, Reason: spec.Reason, DecisionRequired: spec.DecisionRequired,
			Evidence: spec.Evidence, SafeNextStep: spec.SafeNextStep})
		return err
	})
	return out, err
}

// raise stores an open escalation with its event.
func (o *op) raise(esc domain.Escalation) (domain.Escalation, error) {
	esc.ID, esc.State, esc.CreatedAt = o.e.ids.next(domain.PrefixEscalation, o.now), domain.EscalationOpen, o.now
	if esc.Route == "" {
		esc.Route = domain.RouteMainAgent
	}
	if err := o.tx.EscalationInsert(o.ctx, &esc); err != nil {
		return esc, err
	}
	voyageID, err := o.escalationVoyage(esc)
	if err != nil {
		return esc, err
	}
	return esc, o.emit("escalation.raised", nil, voyageID, map[string]any{"escalation_id": esc.ID,
		"route": esc.Route, "kind": esc.Kind, "missions": esc.MissionIDs, "reason": domain.Clip(esc.Reason, 500)})
}

// BlockRequest blocks a mission for a decision. With Epoch set the call is an agent's and is
// fenced; without it, it is the Main Agent's or a person's (block_mission).
type BlockRequest struct {
	MissionID        string       `json:"mission_id"`
	Epoch            *int64       `json:"epoch,omitempty"`
	Route            domain.Route `json:"route,omitempty"`
	Kind             string       `json:"kind,omitempty"`
	Reason           string       `json:"reason"`
	DecisionRequired string       `json:"decision_required"`
	Evidence         []string     `json:"evidence,omitempty"`
	SafeNextStep     string       `json:"safe_next_step,omitempty"`
}

// Block moves a mission to blocked with an escalation that says what must be decided.
func (e *Engine) Block(ctx context.Context, req BlockRequest, actor string) (domain.Escalation, error) {
	var out domain.Escalation
	spec := EscalationSpec{MissionIDs: []string{req.MissionID}, Route: req.Route, Kind: req.Kind,
		Reason: req.Reason, DecisionRequired: req.DecisionRequired, Evidence: req.Evidence, SafeNextStep: req.SafeNextStep}
	if spec.Kind == "" {
		spec.Kind = "decision"
	}
	if err := spec.check(); err != nil {
		return out, err
	}
	err := e.update(ctx, actor, func(o *op) error {
		var m domain.Mission
		var err error
		if req.Epoch != nil {
			m, err = o.fenced(domain.Fence{MissionID: req.MissionID, Epoch: *req.Epoch})
		} else {
			m, err = o.get(req.MissionID)
		}
		if err != nil {
			return err
		}
		if m.State.Leased() {
			if err := o.endAttempt(&m, domain.OutcomeBlocked, nil, nil, req.Reason); err != nil {
				return err
			}
		}
		err = o.blockWith(&m, "block", domain.Escalation{Route: spec.Route, Kind: spec.Kind, Reason: spec.Reason,
			DecisionRequired: spec.DecisionRequired, Evidence: spec.Evidence, SafeNextStep: spec.SafeNextStep}, nil)
		if err == nil {
			out, err = o.tx.EscalationGet(o.ctx, m.EscalationID)
		}
		return err
	})
	if req.Epoch != nil {
		e.forgetRenewal(domain.Fence{MissionID: req.MissionID, Epoch: *req.Epoch})
	}
	return out, err
}

// blockWith raises esc for m and moves m to blocked.
func (o *op) blockWith(m *domain.Mission, opName string, esc domain.Escalation, data map[string]any) error {
	if m.State == domain.StateBlocked {
		return &domain.TransitionError{MissionID: m.ID, Op: opName, State: m.State}
	}
	esc.MissionIDs, esc.VoyageID = []string{m.ID}, m.VoyageID
	raised, err := o.raise(esc)
	if err != nil {
		return err
	}
	if data == nil {
		data = map[string]any{}
	}
	data["escalation_id"], data["reason"] = raised.ID, domain.Clip(esc.Reason, 500)
	m.EscalationID = raised.ID
	m.Lease.ExpiresAt, m.Preempt = time.Time{}, false
	return o.move(m, domain.StateBlocked, opName, "mission.blocked", data)
}

// Resolution actions for ResolveEscalation.
const (
	ResolveRetry       = "retry"       // blocked missions go back to pending
	ResolveSkip        = "skip"        // blocked missions are cancelled and marked skipped
	ResolveCancel      = "cancel"      // blocked missions are cancelled
	ResolveAcknowledge = "acknowledge" // close the report; missions stay as they are
)

// ResolveEscalation closes an open escalation with a decision and applies it to the missions
// it blocked.
func (e *Engine) ResolveEscalation(ctx context.Context, id, action, note, actor string) (domain.Escalation, error) {
	var out domain.Escalation
	if err := domain.CheckID("escalation_id", domain.PrefixEscalation, id); err != nil {
		return out, err
	}
	if !slices.Contains([]string{ResolveRetry, ResolveSkip, ResolveCancel, ResolveAcknowledge}, action) {
		return out, domain.Invalid("action", fmt.Sprintf("%q is not a resolution", domain.Clip(action, 40)), "use retry, skip, cancel or acknowledge")
	}
	err := e.update(ctx, actor, func(o *op) error {
		esc, err := o.tx.EscalationGet(o.ctx, id)
		if err != nil {
			return &domain.NotFoundError{Kind: "escalation", ID: id}
		}
		if esc.State != domain.EscalationOpen {
			return domain.Invalid("escalation_id", id+" is already resolved", "list open ones with list_escalations")
		}
		if action == ResolveRetry {
			if err := o.refuseRetryIntoSpentBudget(esc); err != nil {
				return err
			}
		}
		if err := o.closeEscalation(&esc, action, note); err != nil {
			return err
		}
		out = esc
		for _, mid := range esc.MissionIDs {
			if err := o.applyResolution(mid, esc.ID, action, note); err != nil {
				return err
			}
			if action == ResolveRetry && esc.VoyageID != "" {
				if err := o.retryReported(mid, esc); err != nil {
					return err
				}
			}
		}
		return o.reopenVoyage(esc.VoyageID, esc.ID)
	})
	return out, err
}

// refuseRetryIntoSpentBudget refuses a retry of esc while a mission it blocks is over its own
// or its voyage's budget: the retried mission would only be held, and blocked again with the
// same escalation. The refusal says the budget rule's sentence (CheckSpend), which names what
// to raise. A profile's daily cap is left out: another profile may take the mission.
func (o *op) refuseRetryIntoSpentBudget(esc domain.Escalation) error {
	for _, mid := range esc.MissionIDs {
		m, err := o.get(mid)
		if err != nil || m.State != domain.StateBlocked || m.EscalationID != esc.ID {
			continue // applyResolution passes over it too
		}
		s, err := o.spendOf(&m, "")
		if err != nil {
			return err
		}
		if br := CheckSpend(s); br != nil {
			return domain.Invalid("action", "retry of "+mid+" would start against a spent budget: "+br.HoldMessage(),
				"raise that limit first, then retry; or resolve with skip or cancel")
		}
	}
	return nil
}

func (o *op) closeEscalation(esc *domain.Escalation, action, note string) error {
	esc.State, esc.Resolution, esc.ResolvedBy, esc.ResolvedAt = domain.EscalationResolved, action, o.actor, o.now
	if note != "" {
		esc.Resolution = action + ": " + domain.Clip(note, 2000)
	}
	if err := o.tx.EscalationUpdate(o.ctx, esc); err != nil {
		return err
	}
	return o.emit("escalation.resolved", nil, esc.VoyageID, map[string]any{"escalation_id": esc.ID, "action": action, "note": domain.Clip(note, 500)})
}

// applyResolution applies action to one mission still blocked by escalation escID.
func (o *op) applyResolution(missionID, escID, action, note string) error {
	m, err := o.get(missionID)
	if err != nil || m.State != domain.StateBlocked || m.EscalationID != escID {
		return nil // already moved on (retried, cancelled) or purged
	}
	m.EscalationID = ""
	switch action {
	case ResolveRetry:
		m.NotBefore = time.Time{}
		return o.reopen(&m, "resolve", "mission.resolved", map[string]any{"escalation_id": escID, "note": domain.Clip(note, 500)})
	case ResolveSkip, ResolveCancel:
		return o.cancel(&m, "resolved: "+action, action == ResolveSkip)
	}
	return nil
}

// retryReported retries a failed mission of the voyage whose blocker report esc lists, as
// retry_mission would (a fresh retry budget, its blocked dependents reopened): "retry" on a
// voyage's report means its stuck missions run again, and a failed one is stuck too —
// otherwise the voyage reopened only to block again at once with the same report.
func (o *op) retryReported(missionID string, esc domain.Escalation) error {
	m, err := o.get(missionID)
	if err != nil || m.State != domain.StateFailed || m.VoyageID != esc.VoyageID {
		return nil // blocked ones went through applyResolution; others moved on or were purged
	}
	m.AttemptsUsed, m.NotBefore, m.EscalationID, m.LastSignature = 0, time.Time{}, "", ""
	if err := o.reopen(&m, "retry", "mission.retried", map[string]any{"escalation_id": esc.ID}); err != nil {
		return err
	}
	return o.reopenBlockedBy(m.ID)
}

// reopen moves a blocked, failed or cancelled mission back to pending and re-records its
// write area; a mission whose hard dependency is failed or cancelled becomes blocked again.
func (o *op) reopen(m *domain.Mission, opName, eventType string, data map[string]any) error {
	m.FinishedAt, m.Serial, m.Skipped, m.Abandons = time.Time{}, false, false, 0
	if m.Landing != domain.LandingNone && m.State != domain.StateCompleted {
		m.Landing = domain.LandingNone
	}
	if err := o.move(m, domain.StatePending, opName, eventType, data); err != nil {
		return err
	}
	if err := o.attachWriteArea(m); err != nil {
		return err
	}
	// A hard dependency that is still failed or cancelled means it could never run: block it
	// again at once, naming that dependency, rather than leave it pending forever (B14).
	return o.blockIfUpstreamFailed(m)
}

// reopenVoyage puts a voyage that was blocked by escalation escID (or by anything, when escID
// is empty) back to active.
func (o *op) reopenVoyage(voyageID, escID string) error {
	if voyageID == "" {
		return nil
	}
	v, err := o.tx.VoyageGet(o.ctx, voyageID)
	if err != nil {
		return err
	}
	if v.State != domain.VoyageBlocked || (escID != "" && v.EscalationID != "" && v.EscalationID != escID) {
		return nil
	}
	if v.EscalationID != "" && v.EscalationID != escID {
		// The voyage's blocker report is superseded: something can go on again.
		if report, err := o.tx.EscalationGet(o.ctx, v.EscalationID); err == nil && report.State == domain.EscalationOpen {
			if err := o.closeEscalation(&report, ResolveAcknowledge, "the voyage can go on again"); err != nil {
				return err
			}
		}
	}
	v.State, v.EscalationID, v.SettledAt, v.UpdatedAt = domain.VoyageActive, "", time.Time{}, o.now
	if err := o.saveVoyage(&v, domain.VoyageBlocked, "reopen"); err != nil {
		return err
	}
	return o.emit("voyage.reopened", nil, v.ID, map[string]any{"to": domain.VoyageActive})
}
