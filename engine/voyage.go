package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"slices"
	"strings"
)

// AgentCheck lets the scheduler add its own reason a runnable mission cannot be dispatched
// (no profile offers its persona or capabilities); nil means some agent could take it.
type AgentCheck func(m *domain.Mission) *Reason

// Settled is the outcome of settling one voyage.
type Settled struct {
	Voyage  domain.Voyage `json:"voyage"`
	Changed bool          `json:"changed"`
	// Stuck lists the missions that cannot go on without a decision, with their reasons, when
	// the voyage became blocked.
	Stuck map[string][]Reason `json:"stuck,omitempty"`
}

// SettleVoyage decides whether a voyage is finished (design brief §5 step 6): completed when
// every mission is completed and landed (or cancelled); blocked, with an escalation report,
// when nothing can go on without a decision (deadlocks included); back to active when
// something can go on again.
func (e *Engine) SettleVoyage(ctx context.Context, id string, check AgentCheck) (Settled, error) {
	var out Settled
	if change, err := e.settleWouldChange(ctx, id, check); err != nil || !change {
		if err == nil {
			out.Voyage, err = e.voyage(ctx, id)
		}
		return out, err // nothing to change: no write transaction
	}
	err := e.update(ctx, "scheduler", func(o *op) error {
		v, err := o.tx.VoyageGet(o.ctx, id)
		if err != nil {
			return err
		}
		out.Voyage = v
		if v.State == domain.VoyageCompleted || v.State == domain.VoyageCancelled {
			return nil
		}
		ms, err := o.tx.VoyageMissions(o.ctx, id)
		if err != nil {
			return err
		}
		done, progress, stuck, err := o.assess(&v, ms, check)
		if err != nil {
			return err
		}
		switch {
		case done:
			if err := o.closeVoyageReport(&v, "the voyage completed"); err != nil {
				return err
			}
			out.Changed, err = true, o.setVoyage(&v, domain.VoyageCompleted, "", nil)
		case !progress && len(stuck) > 0 && v.State != domain.VoyageBlocked:
			out.Stuck = stuck
			out.Changed, err = true, o.blockVoyage(&v, stuck)
		case progress && v.State == domain.VoyageBlocked:
			out.Changed, err = true, o.reopenVoyage(v.ID, "")
		}
		if err == nil && out.Changed {
			out.Voyage, err = o.tx.VoyageGet(o.ctx, id)
		}
		return err
	})
	return out, err
}

// settleWouldChange runs SettleVoyage's decision on a read snapshot.
func (e *Engine) settleWouldChange(ctx context.Context, id string, check AgentCheck) (bool, error) {
	change := false
	err := e.view(ctx, func(r Reader) error {
		v, err := r.VoyageGet(ctx, id)
		if err != nil || v.State == domain.VoyageCompleted || v.State == domain.VoyageCancelled {
			return err
		}
		ms, err := r.VoyageMissions(ctx, id)
		if err != nil {
			return err
		}
		o := &op{e: e, ctx: ctx, now: e.Now()}
		done, progress, stuck, err := o.assessIn(r, &v, ms, check)
		// nothing stuck and nothing moving is a moment between two writes (a landing
		// carried by its repair, say): not a reason to block
		change = done || (!progress && len(stuck) > 0 && v.State != domain.VoyageBlocked) || (progress && v.State == domain.VoyageBlocked)
		return err
	})
	return change, err
}

// Voyage reads one voyage's row (ErrNotFound when there is none), without its missions.
func (e *Engine) Voyage(ctx context.Context, id string) (domain.Voyage, error) {
	return e.voyage(ctx, id)
}

func (e *Engine) voyage(ctx context.Context, id string) (domain.Voyage, error) {
	return viewValue(ctx, e, func(r Reader) (domain.Voyage, error) { return r.VoyageGet(ctx, id) })
}

// assess classifies a voyage's missions: done (all finished), progress (something can move
// without a decision) and, for the others, why they are stuck.
func (o *op) assess(v *domain.Voyage, ms []domain.Mission, check AgentCheck) (done, progress bool, stuck map[string][]Reason, err error) {
	return o.assessIn(o.tx, v, ms, check)
}

func (o *op) assessIn(r Reader, v *domain.Voyage, ms []domain.Mission, check AgentCheck) (done, progress bool, stuck map[string][]Reason, err error) {
	stuck = map[string][]Reason{}
	done = len(ms) > 0
	paused, err := r.Paused(o.ctx)
	if err != nil {
		return false, false, nil, err
	}
	live, err := r.MissionsLeased(o.ctx)
	if err != nil {
		return false, false, nil, err
	}
	for i := range ms {
		m := &ms[i]
		finished := m.State == domain.StateCancelled || (m.State == domain.StateCompleted && (m.Landing.Satisfies() || m.Landing == domain.LandingLeft))
		done = done && finished
		if finished {
			continue
		}
		switch {
		case m.State == domain.StateCompleted && m.Landing == domain.LandingRepair:
			// The repair mission that carries this work is a mission of the voyage too and is
			// assessed on its own (stuck when it is, progress when it moves); counting this one
			// as progress kept a voyage whose repair failed or stopped active for ever. A repair
			// that already landed is about to mark this work landed too (carried, a write of its
			// own): that moment is progress, not a deadlock with nothing stuck.
			switch {
			case !hasRepair(ms, m.ID):
				stuck[m.ID] = []Reason{{Code: "landing", Message: "landing is repair, but every repair mission of its work was cancelled: a decision is needed"}}
			case repairLanded(ms, m.ID):
				progress = true
			}
		case m.State.Leased(), m.State == domain.StateCompleted && landingMoves(m.Landing):
			progress = true
		case m.State == domain.StateCompleted:
			msg, err := landingStuck(o.ctx, r, m)
			if err != nil {
				return false, false, nil, err
			}
			stuck[m.ID] = []Reason{{Code: "landing", Message: msg}}
		case m.State == domain.StateBlocked:
			stuck[m.ID] = []Reason{{Code: WhyState, Message: "blocked: waiting for escalation " + m.EscalationID}}
		case m.State == domain.StateFailed:
			stuck[m.ID] = []Reason{{Code: WhyState, Message: "failed: " + decisionReason(m)}}
		case m.State.Runnable():
			rs, err := explain(o.ctx, r, m, o.now, paused, live)
			if err != nil {
				return false, false, nil, err
			}
			tokens, err := missionTokenLimit(o.ctx, r, m)
			if err != nil {
				return false, false, nil, err
			}
			if r := VoyageHold(v, m, tokens); r != nil {
				rs = append(rs, *r)
			} else if r := agentReason(check, m, rs); r != nil {
				rs = append(rs, *r)
			}
			if allTransient(rs) {
				progress = true
			} else {
				stuck[m.ID] = rs
			}
		}
	}
	return done, progress, stuck, nil
}

// landingMoves reports whether a completed mission's landing goes on without a decision: it
// waits for the landing queue, its reviewer or its repair mission.
// hasRepair reports whether ms holds a repair mission of subject that was not cancelled.
func hasRepair(ms []domain.Mission, subject string) bool {
	for i := range ms {
		if ms[i].Kind == domain.KindRepair && ms[i].SubjectID == subject && ms[i].State != domain.StateCancelled {
			return true
		}
	}
	return false
}

// repairLanded reports whether a repair mission of subject in ms has landed (its work carries
// the subject's, which is marked landed right after).
func repairLanded(ms []domain.Mission, subject string) bool {
	for i := range ms {
		r := &ms[i]
		if r.Kind == domain.KindRepair && r.SubjectID == subject && r.State == domain.StateCompleted && r.Landing.Satisfies() {
			return true
		}
	}
	return false
}

// closeVoyageReport closes the voyage's open blocker report once it does not apply any more.
func (o *op) closeVoyageReport(v *domain.Voyage, why string) error {
	if v.EscalationID == "" {
		return nil
	}
	report, err := o.tx.EscalationGet(o.ctx, v.EscalationID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil
	case err != nil:
		return err
	case report.State != domain.EscalationOpen:
		return nil
	}
	return o.closeEscalation(&report, ResolveAcknowledge, why)
}

// landingStuck says why a completed mission's landing holds its voyage: what the landing waits
// for (the table in engine/domain/landingwait.go, told by its landing record: failed checks
// are not called a conflict).
func landingStuck(ctx context.Context, r Reader, m *domain.Mission) (string, error) {
	w, ok, err := landingWait(ctx, r, m)
	if err != nil || !ok {
		return "landing is " + string(m.Landing) + ": a decision is needed", err
	}
	return "landing waits: " + w.Explain(m.ID), nil
}

func landingMoves(l domain.LandingState) bool {
	return l == domain.LandingPending || l == domain.LandingApproved || l == domain.LandingReview || l == domain.LandingRepair
}

// Reasons that come from the voyage rather than the mission.
const (
	WhyBudget       = "budget"       // a hard budget is spent (mission, voyage or profile: Breach.HoldMessage)
	WhyRequirements = "requirements" // the voyage's requirements changed and are not settled
)

// voyageReason holds a runnable mission back for its voyage: cost limit reached, or
// requirements changed before it started (both need a decision).
func voyageReason(v *domain.Voyage, m *domain.Mission) *Reason {
	if r := budgetHold(Spend{Voyage: v, VoyageSpent: v.Usage}); r != nil {
		return r
	}
	switch {
	case v.RequirementsChanged && m.Attempt == 0:
		return &Reason{Code: WhyRequirements, Message: "the voyage's requirements changed: it waits until they are settled (update_voyage requirements_changed=false)"}
	}
	return nil
}

func agentReason(check AgentCheck, m *domain.Mission, rs []Reason) *Reason {
	if check == nil || len(rs) > 0 {
		return nil
	}
	return check(m)
}

func allTransient(rs []Reason) bool {
	for _, r := range rs {
		if !r.Transient() {
			return false
		}
	}
	return true
}

func decisionReason(m *domain.Mission) string {
	if m.Decision != nil {
		return m.Decision.Reason
	}
	return "no decision recorded"
}

func (o *op) setVoyage(v *domain.Voyage, to domain.VoyageState, escID string, data map[string]any) error {
	from := v.State
	v.State, v.EscalationID, v.UpdatedAt = to, escID, o.now
	if to == domain.VoyageCompleted || to == domain.VoyageBlocked {
		v.SettledAt = o.now
	}
	if err := o.saveVoyage(v, from, "settle"); err != nil {
		return err
	}
	if data == nil {
		data = map[string]any{}
	}
	data["from"], data["to"] = from, to
	return o.emit("voyage."+string(to), nil, v.ID, data)
}

// blockVoyage raises the voyage's escalation report and marks it blocked.
func (o *op) blockVoyage(v *domain.Voyage, stuck map[string][]Reason) error {
	ids := make([]string, 0, len(stuck))
	for id := range stuck {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var evidence []string
	kind, decision := "deadlock", "nothing in this voyage can run: remove or change the blocking dependencies, or cancel the missions involved"
	spent := "" // the first budget hold's sentence: what a budget report says
	for _, id := range ids {
		var msgs []string
		for _, r := range stuck[id] {
			msgs = append(msgs, r.Message)
			switch {
			case r.Code == WhyState || r.Code == "landing":
				kind, decision = "report", "decide the open escalations of the blocked missions (resolve_escalation), retry failed missions, or cancel them"
			case r.Code == WhyBudget && kind == "deadlock":
				// not a dependency problem: telling the caller to remove dependencies would mislead
				kind, decision = "budget", voyageBudgetDecision
				spent = r.Message
			case r.Code == WhyUnavailable && kind == "deadlock":
				kind, decision = KindNoAgent, "configure an agent profile that offers what the missions need, start an agent that claims with it, change the missions' persona or capabilities (update_mission), or cancel them"
			}
		}
		evidence = append(evidence, id+": "+strings.Join(msgs, "; "))
	}
	reason := fmt.Sprintf("voyage %s (%s) cannot go on without a decision: %d mission(s) stuck", v.ID, v.Title, len(ids))
	if kind == "budget" {
		reason = fmt.Sprintf("voyage %s (%s) stopped at a budget: %d mission(s) wait, since %s", v.ID, v.Title, len(ids), spent)
	}
	if kind == KindNoAgent {
		reason = fmt.Sprintf("voyage %s (%s) waits for an agent nobody offers: no agent took %d mission(s) within the grace period", v.ID, v.Title, len(ids))
	}
	esc, err := o.raise(domain.Escalation{MissionIDs: ids, VoyageID: v.ID, Route: domain.RouteMainAgent, Kind: kind,
		Reason:           reason,
		DecisionRequired: decision, Evidence: truncateList(evidence, MaxListItems),
		SafeNextStep: "voyage_status " + v.ID + " shows each mission's reason; cancel_voyage stops it safely"})
	if err != nil {
		return err
	}
	return o.setVoyage(v, domain.VoyageBlocked, esc.ID, map[string]any{"escalation_id": esc.ID, "stuck": ids})
}

func truncateList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n-1], fmt.Sprintf("… and %d more", len(s)-n+1))
}

// EscalateMissedDeadlines raises one escalation (route main_agent) for each mission whose
// deadline passed while it was not finished, once per deadline.
func (e *Engine) EscalateMissedDeadlines(ctx context.Context) ([]domain.Escalation, error) {
	var out []domain.Escalation
	due := false
	if err := e.view(ctx, func(r Reader) error {
		ms, err := r.MissionsPastDeadline(ctx, e.Now(), 1)
		due = len(ms) > 0
		return err
	}); err != nil || !due {
		return nil, err // the common case: no write transaction at all
	}
	err := e.update(ctx, "scheduler", func(o *op) error {
		ms, err := o.tx.MissionsPastDeadline(o.ctx, o.now, 100)
		if err != nil {
			return err
		}
		for i := range ms {
			m := &ms[i]
			esc, err := o.raise(domain.Escalation{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID, Route: domain.RouteMainAgent,
				Kind: "deadline", Reason: fmt.Sprintf("mission %s (%s) missed its deadline %s while %s", m.ID, m.Title, m.Deadline.Format("2006-01-02T15:04:05Z07:00"), m.State),
				DecisionRequired: "extend the deadline (update_mission), raise its priority, or cancel it",
				SafeNextStep:     "update_mission with a later deadline"})
			if err != nil {
				return err
			}
			g := Guard{State: m.State, Epoch: m.Lease.Epoch}
			m.DeadlineEscalated, m.UpdatedAt = true, o.now
			if err := o.save(m, g); err != nil {
				return err
			}
			out = append(out, esc)
		}
		return nil
	})
	return out, err
}

// VoyagePatch changes a voyage; nil fields stay as they are.
type VoyagePatch struct {
	// RequirementsChanged marks (true) or clears (false) the voyage's requirements as
	// changed: while marked, its missions that have not started yet are not dispatched.
	RequirementsChanged *bool `json:"requirements_changed,omitempty"`
	// CostLimitUSD is the voyage's cost limit in US dollars (0: none).
	CostLimitUSD *float64 `json:"cost_limit_usd,omitempty"`
	// TokenLimit is the voyage's limit of input plus output tokens (0: none).
	TokenLimit *int64 `json:"token_limit,omitempty"`
	// Note says why, for the event log.
	Note string `json:"note,omitempty"`
}

// UpdateVoyage applies patch to a voyage that is not finished. Marking and clearing the
// requirements change are events of their own (voyage.requirements_changed, …_resolved).
func (e *Engine) UpdateVoyage(ctx context.Context, voyageID string, p VoyagePatch, actor string) (domain.Voyage, error) {
	var v domain.Voyage
	if err := domain.CheckID("voyage_id", domain.PrefixVoyage, voyageID); err != nil {
		return v, err
	}
	if p.RequirementsChanged == nil && p.CostLimitUSD == nil && p.TokenLimit == nil {
		return v, domain.Invalid("patch", "changes nothing", "give requirements_changed, cost_limit_usd or token_limit")
	}
	if p.CostLimitUSD != nil && *p.CostLimitUSD < 0 {
		return v, domain.Invalid("cost_limit_usd", "is negative", "use 0 for no limit")
	}
	if p.TokenLimit != nil && *p.TokenLimit < 0 {
		return v, domain.Invalid("token_limit", "is negative", "use 0 for no limit")
	}
	err := e.update(ctx, actor, func(o *op) error {
		var err error
		if v, err = o.tx.VoyageGet(o.ctx, voyageID); err != nil {
			return &domain.NotFoundError{Kind: "voyage", ID: voyageID}
		}
		if v.State == domain.VoyageCompleted || v.State == domain.VoyageCancelled {
			return domain.Invalid("voyage_id", fmt.Sprintf("voyage %s is %s and cannot change", voyageID, v.State), "dispatch a new voyage")
		}
		var events []string
		if c := p.RequirementsChanged; c != nil && *c != v.RequirementsChanged {
			v.RequirementsChanged = *c
			events = append(events, map[bool]string{true: "voyage.requirements_changed", false: "voyage.requirements_resolved"}[*c])
		}
		limits := v.CostLimitUSD != derefOr(p.CostLimitUSD, v.CostLimitUSD) || v.TokenLimit != derefOr(p.TokenLimit, v.TokenLimit)
		if limits {
			v.CostLimitUSD, v.TokenLimit = derefOr(p.CostLimitUSD, v.CostLimitUSD), derefOr(p.TokenLimit, v.TokenLimit)
			events = append(events, "voyage.updated")
		}
		if len(events) == 0 {
			return nil
		}
		v.UpdatedAt = o.now
		if err := o.saveVoyage(&v, v.State, "update"); err != nil {
			return err
		}
		for _, typ := range events {
			if err := o.emit(typ, nil, v.ID, map[string]any{"note": domain.Clip(p.Note, 2000), "cost_limit_usd": v.CostLimitUSD, "token_limit": v.TokenLimit}); err != nil {
				return err
			}
		}
		if p.CostLimitUSD == nil && p.TokenLimit == nil {
			return nil
		}
		if err := o.resumeVoyageBudget(v.ID); err != nil {
			return err
		}
		v, err = o.tx.VoyageGet(o.ctx, v.ID)
		return err
	})
	return v, err
}

// derefOr is *p, or def when p is nil.
func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
