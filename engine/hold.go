package engine

import (
	"context"
	"errors"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"slices"
	"strings"
	"time"
)

// Hold is why the scheduler's planner last held a waiting mission back (design brief §5 step
// 3): the first reason of its plan, with the time that reason's code began. The leader writes
// holds only when a reason changes; get_mission, voyage_status, status and doctor read them,
// so what they say is what the planner decided.
type Hold struct {
	MissionID string    `json:"mission_id"`
	Reason    Reason    `json:"reason"`
	UpdatedAt time.Time `json:"updated_at"`
}

// HoldChange is one mission whose hold changed in RecordHolds: From is the zero Reason when it
// was not held, To when it is not held any more.
type HoldChange struct {
	MissionID string
	From, To  Reason
}

// RecordHolds replaces the planner's holds with holds (every mission it held back in one
// planning step; a mission absent from holds is not held any more) in one write transaction,
// and returns what changed. A reason whose code stays keeps its Since, so a grace period
// counts from when the mission began to wait for that reason. When a mission stops waiting
// for an agent that offers what it needs (code no_agent), its open no_agent escalation is
// closed.
func (e *Engine) RecordHolds(ctx context.Context, holds []Hold) ([]HoldChange, error) {
	var out []HoldChange
	err := e.update(ctx, "scheduler", func(o *op) error {
		out = nil
		old, err := o.tx.HoldList(o.ctx)
		if err != nil {
			return err
		}
		prev := make(map[string]Hold, len(old))
		for _, h := range old {
			prev[h.MissionID] = h
		}
		for _, h := range holds {
			p, had := prev[h.MissionID]
			delete(prev, h.MissionID)
			if had && p.Reason.Code == h.Reason.Code {
				h.Reason.Since = p.Reason.Since
			}
			if had && sameHold(p.Reason, h.Reason) {
				continue
			}
			if h.Reason.Since.IsZero() {
				h.Reason.Since = o.now
			}
			h.UpdatedAt = o.now
			if err := o.tx.HoldUpsert(o.ctx, &h); err != nil {
				return err
			}
			out = append(out, HoldChange{MissionID: h.MissionID, From: p.Reason, To: h.Reason})
			if err := o.leftNoAgent(p.Reason, h.Reason, h.MissionID); err != nil {
				return err
			}
			if err := o.holdStarted(p.Reason, h.Reason, h.MissionID); err != nil {
				return err
			}
		}
		for id, p := range prev {
			if err := o.tx.HoldDelete(o.ctx, id); err != nil {
				return err
			}
			out = append(out, HoldChange{MissionID: id, From: p.Reason})
			if err := o.leftNoAgent(p.Reason, Reason{}, id); err != nil {
				return err
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b HoldChange) int { return strings.Compare(a.MissionID, b.MissionID) })
	return out, err
}

// sameHold reports whether two reasons say the same thing (Since aside).
func sameHold(a, b Reason) bool {
	return a.Code == b.Code && a.Message == b.Message && a.MissionID == b.MissionID && a.Until.Equal(b.Until)
}

// leftNoAgent closes the no_agent escalation of a mission that no longer waits for an agent.
func (o *op) leftNoAgent(from, to Reason, missionID string) error {
	if from.Code != WhyUnavailable || to.Code == WhyUnavailable {
		return nil
	}
	return o.closeMissionEscalations(missionID, []string{KindNoAgent}, "an agent can take the mission now")
}

// closeMissionEscalations closes the open escalations of kinds that concern only missionID.
func (o *op) closeMissionEscalations(missionID string, kinds []string, why string) error {
	escs, err := o.tx.EscalationList(o.ctx, EscalationFilter{State: domain.EscalationOpen, MissionID: missionID, Limit: 100})
	if err != nil {
		return err
	}
	for i := range escs {
		e := &escs[i]
		if slices.Contains(kinds, e.Kind) && len(e.MissionIDs) == 1 && e.MissionIDs[0] == missionID {
			if err := o.closeEscalation(e, ResolveAcknowledge, why); err != nil {
				return err
			}
		}
	}
	return nil
}

// KindNoAgent is the escalation kind raised when no agent offers what a mission needs and none
// claimed it within the grace period.
const KindNoAgent = "no_agent"

// OnceKey is the de-duplication key EscalateOnce stores with an escalation: its cause kind and
// its subject (the one mission it concerns), "checkout:m-…".
func OnceKey(kind, missionID string) string { return kind + ":" + missionID }

// EscalateOnce raises spec unless an open escalation with the same key (OnceKey: its kind and
// its single mission) exists. The key is stored with the escalation and a unique index keeps
// it to one open escalation, and the check and the insert share one write transaction, so
// two leaders, or a leader after a restart, never raise it twice. Once that escalation is
// resolved, the same cause may raise a new one. It returns the escalation raised or found,
// and whether it was raised now. spec must name exactly one mission (mission_ids).
func (e *Engine) EscalateOnce(ctx context.Context, spec EscalationSpec, actor string) (domain.Escalation, bool, error) {
	var out domain.Escalation
	var raised bool
	if err := spec.check(); err != nil {
		return out, false, err
	}
	if len(spec.MissionIDs) != 1 {
		return out, false, domain.Invalid("mission_ids", "EscalateOnce needs exactly one mission", "name the mission")
	}
	id := spec.MissionIDs[0]
	key := OnceKey(spec.Kind, id)
	err := e.update(ctx, actor, func(o *op) error {
		raised = false
		escs, err := o.tx.EscalationList(o.ctx, EscalationFilter{State: domain.EscalationOpen, OnceKey: key, Limit: 1})
		if err != nil {
			return err
		}
		if len(escs) > 0 {
			out = escs[0]
			return nil
		}
		if err := o.checkExisting(id, "mission_ids[0]"); err != nil {
			return err
		}
		out, err = o.raise(domain.Escalation{MissionIDs: spec.MissionIDs, VoyageID: spec.VoyageID, Route: spec.Route,
			Kind: spec.Kind, Reason: spec.Reason, DecisionRequired: spec.DecisionRequired,
			Evidence: spec.Evidence, SafeNextStep: spec.SafeNextStep, OnceKey: key})
		raised = err == nil
		return err
	})
	return out, raised, err
}

// Holds returns the planner's current holds, by mission id.
func (e *Engine) Holds(ctx context.Context) (map[string]Hold, error) {
	return viewValue(ctx, e, func(r Reader) (map[string]Hold, error) {
		hs, err := r.HoldList(ctx)
		out := make(map[string]Hold, len(hs))
		for _, h := range hs {
			out[h.MissionID] = h
		}
		return out, err
	})
}

// whyNotRunning is the one answer to "why is this runnable mission not running": the runnable
// rules (explain) first; when they allow it, the planner's recorded hold (resources, slots, no
// agent, budget …) while a scheduler loop leads; no loop at all when none leads; otherwise the
// mission waits for the next planning step. get_mission, voyage_status and the voyage's
// settlement all read it, and the planner writes the hold from the same rules.
func whyNotRunning(ctx context.Context, r Reader, m *domain.Mission, now time.Time, paused bool, live []domain.Mission, leader Leader) ([]Reason, error) {
	rs, err := explain(ctx, r, m, now, paused, live)
	if err != nil {
		return nil, err
	}
	held, err := startHold(ctx, r, m) // a spent budget holds it back from a pull-mode claim too
	if err != nil {
		return nil, err
	}
	if len(rs) > 0 {
		// waiting for something else too: a spent budget is said as well, since it will hold
		// the mission once that wait is over — first when the other wait passes by itself
		// (another mission alone in the repository, a conflict, a pause), as the planner
		// holds it (planner.Compute keeps the budget's hold then), after it otherwise (an
		// upstream mission to complete)
		if held != nil {
			if rs[0].Transient() {
				return append([]Reason{*held}, rs...), nil
			}
			rs = append(rs, *held)
		}
		return rs, nil
	}
	if held != nil {
		return []Reason{*held}, nil
	}
	if leader.Owner == "" || !leader.ExpiresAt.After(now) {
		return []Reason{noLeaderReason()}, nil
	}
	h, err := r.HoldGet(ctx, m.ID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
	case err != nil:
		return nil, err
	case PlannerCode(h.Reason.Code):
		return []Reason{h.Reason}, nil
	}
	return []Reason{{Code: WhyQueued, Message: "runnable: waiting for the scheduler's next planning step"}}, nil
}

// landingWhy says why a completed mission's landing is not done: the landing wait the last
// planning step recorded as its hold (target busy, its review at work, a checkout retry not
// due …), else what its landing state waits for (the table in engine/domain/landingwait.go).
// A hold is current only while the landing is queued or waits with the hold's own code (the
// planner holds queued, approval and repair landings): a landing that went on to conflicted
// keeps the hold it had while queued, and that hold no longer says why.
func landingWhy(ctx context.Context, r Reader, m *domain.Mission) ([]Reason, error) {
	h, err := r.HoldGet(ctx, m.ID)
	own, _ := m.Landing.Wait()
	switch {
	case errors.Is(err, domain.ErrNotFound):
	case err != nil:
		return nil, err
	case domain.IsLandingWait(h.Reason.Code) && (m.Landing.Queued() || h.Reason.Code == own.Code):
		return []Reason{h.Reason}, nil
	}
	w, ok, err := landingWait(ctx, r, m)
	if !ok || err != nil {
		return nil, err
	}
	return []Reason{{Code: w.Code, Message: w.Explain(m.ID)}}, nil
}

func noLeaderReason() Reason {
	return Reason{Code: WhyNoLeader, Message: "no scheduler loop runs on this data dir: start `mcp-scheduler serve` or `mcp-scheduler daemon` " +
		"to launch managed agents (pull-mode agents can still claim it with claim_mission)"}
}

// PlannerCode reports whether a reason code is one the planner adds on top of the runnable
// rules (agents, slots, resources, budgets), as opposed to one explain derives from the store.
func PlannerCode(code string) bool {
	switch code {
	case WhySlots, WhyResources, WhyWaitingAgent, WhyUnavailable, WhyBudget, WhyRequirements, WhyRateLimited:
		return true
	}
	return false
}

// VoyageHold holds a runnable mission back for its voyage or its own budget: the voyage's
// cost or token limit is reached, its requirements changed before the mission started, or the
// mission's own cost limit or token limit (tokens: its limit, Reader.MissionTokenLimitGet; 0:
// none) is reached. Each needs a decision. The planner, a pull-mode claim and the voyage's
// settlement all apply it (nil: nothing holds it back); v may be nil for a mission without a
// voyage.
func VoyageHold(v *domain.Voyage, m *domain.Mission, tokens int64) *Reason {
	if v != nil {
		if r := voyageReason(v, m); r != nil {
			return r
		}
	}
	return budgetHold(Spend{Mission: m, MissionSpent: m.Usage, MissionTokens: tokens})
}

// missionTokenLimit reads m's token limit from r when it could matter (m spent tokens
// already); 0 otherwise, without a read.
func missionTokenLimit(ctx context.Context, r Reader, m *domain.Mission) (int64, error) {
	if m.Usage.Tokens() == 0 {
		return 0, nil
	}
	return r.MissionTokenLimitGet(ctx, m.ID)
}

// startHold is VoyageHold with the mission's token limit and its voyage read from r.
func startHold(ctx context.Context, r Reader, m *domain.Mission) (*Reason, error) {
	tokens, err := missionTokenLimit(ctx, r, m)
	if err != nil {
		return nil, err
	}
	var v *domain.Voyage
	if m.VoyageID != "" {
		vo, err := r.VoyageGet(ctx, m.VoyageID)
		if err != nil {
			return nil, err
		}
		v = &vo
	}
	return VoyageHold(v, m, tokens), nil
}
