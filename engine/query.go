package engine

import (
	"context"
	"errors"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"time"
)

// MissionDetail is a mission with everything a caller asks about it.
type MissionDetail struct {
	Mission    domain.Mission      `json:"mission"`
	DependsOn  []domain.Dependency `json:"depends_on,omitempty"`
	Dependents []domain.Dependency `json:"dependents,omitempty"`
	Attempts   []domain.Attempt    `json:"attempts,omitempty"`
	Landings   []domain.Landing    `json:"landings,omitempty"`
	// Workspaces are the attempts' workspace records, oldest attempt first.
	Workspaces    []WorkspaceRecord  `json:"workspaces,omitempty"`
	Escalation    *domain.Escalation `json:"escalation,omitempty"`
	WhyNotRunning []Reason           `json:"why_not_running,omitempty"`
	// LandingReason says why the landing is not_required (LandingWhy; absent in any other
	// landing state): a review, a read-only or main-checkout workspace, nothing to land.
	LandingReason string `json:"landing_reason,omitempty"`
	// RunningUsage is what the attempt in flight has spent so far (its last task.usage);
	// UsageNote says when an agent reported no usage at all (usagenote.go).
	RunningUsage *domain.Usage `json:"running_usage,omitempty"`
	UsageNote    string        `json:"usage_note,omitempty"`
	// TokenLimit is the mission's limit of input plus output tokens (0: none).
	TokenLimit int64 `json:"token_limit,omitempty"`
}

// GetMission returns a mission with its edges, attempts, landings, workspaces, open
// escalation and, when it is waiting, why it is not running.
func (e *Engine) GetMission(ctx context.Context, id string) (MissionDetail, error) {
	var d MissionDetail
	if err := domain.CheckID("mission_id", domain.PrefixMission, id); err != nil {
		return d, err
	}
	err := e.view(ctx, func(r Reader) error {
		m, err := r.MissionGet(ctx, id)
		if errors.Is(err, domain.ErrNotFound) {
			return &domain.NotFoundError{Kind: "mission", ID: id}
		}
		if err != nil {
			return err
		}
		d.Mission = m
		if d.DependsOn, err = r.DependenciesOf(ctx, id); err != nil {
			return err
		}
		if d.Dependents, err = r.DependentsOf(ctx, id); err != nil {
			return err
		}
		if d.Attempts, err = r.AttemptList(ctx, id); err != nil {
			return err
		}
		if d.Landings, err = r.LandingList(ctx, id); err != nil {
			return err
		}
		if d.Workspaces, err = r.WorkspaceList(ctx, id); err != nil {
			return err
		}
		if m.EscalationID != "" {
			if esc, err := r.EscalationGet(ctx, m.EscalationID); err == nil {
				d.Escalation = &esc
			}
		}
		if err := d.readUsage(ctx, r); err != nil {
			return err
		}
		d.LandingReason = LandingWhy(m, d.Landings)
		switch {
		case m.State.Runnable():
			d.WhyNotRunning, err = whyNotRunningIn(ctx, r, &m, e.Now())
		case m.State == domain.StateCompleted && !m.Landing.Satisfies():
			d.WhyNotRunning, err = landingWhy(ctx, r, &m)
		}
		return err
	})
	return d, err
}

func whyNotRunningIn(ctx context.Context, r Reader, m *domain.Mission, now time.Time) ([]Reason, error) {
	paused, live, leader, err := reasonContext(ctx, r)
	if err != nil {
		return nil, err
	}
	return whyNotRunning(ctx, r, m, now, paused, live, leader)
}

// reasonContext reads what every mission's reasons are judged against: the pause flag, the
// leased missions and the leader (pausedAndLive, then the leader).
func reasonContext(ctx context.Context, r Reader) (paused bool, live []domain.Mission, leader Leader, err error) {
	if paused, live, err = pausedAndLive(ctx, r); err != nil {
		return false, nil, Leader{}, err
	}
	leader, err = r.LeaderGet(ctx)
	return paused, live, leader, err
}

// ListMissions pages through missions; pass the last id as f.Cursor for the next page.
func (e *Engine) ListMissions(ctx context.Context, f MissionFilter) ([]domain.Mission, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	return viewValue(ctx, e, func(r Reader) ([]domain.Mission, error) { return r.MissionList(ctx, f) })
}

// VoyageDetail is a voyage with its missions and open escalations.
type VoyageDetail struct {
	Voyage      domain.Voyage               `json:"voyage"`
	Counts      map[domain.MissionState]int `json:"counts"`
	Missions    []MissionLine               `json:"missions"`
	Escalations []domain.Escalation         `json:"escalations,omitempty"`
}

// MissionLine is a mission in a voyage listing.
type MissionLine struct {
	ID       string              `json:"id"`
	Key      string              `json:"key,omitempty"`
	Title    string              `json:"title"`
	State    domain.MissionState `json:"state"`
	Landing  domain.LandingState `json:"landing"`
	Kind     domain.MissionKind  `json:"kind"`
	Attempt  int                 `json:"attempt"`
	Priority int                 `json:"priority"`
	CostUSD  float64             `json:"cost_usd,omitempty"`
	Summary  string              `json:"summary,omitempty"`
	// Why says why a waiting mission is not running.
	Why []Reason `json:"why,omitempty"`
}

// VoyageStatus returns a voyage with each mission's state, landing and reason.
func (e *Engine) VoyageStatus(ctx context.Context, id string) (VoyageDetail, error) {
	var d VoyageDetail
	if err := domain.CheckID("voyage_id", domain.PrefixVoyage, id); err != nil {
		return d, err
	}
	err := e.view(ctx, func(r Reader) error {
		v, err := r.VoyageGet(ctx, id)
		if errors.Is(err, domain.ErrNotFound) {
			return &domain.NotFoundError{Kind: "voyage", ID: id}
		}
		if err != nil {
			return err
		}
		d.Voyage, d.Counts = v, map[domain.MissionState]int{}
		ms, err := r.VoyageMissions(ctx, id)
		if err != nil {
			return err
		}
		paused, live, leader, err := reasonContext(ctx, r)
		if err != nil {
			return err
		}
		for i := range ms {
			line, err := missionLine(ctx, r, &ms[i], e.Now(), paused, live, leader)
			if err != nil {
				return err
			}
			d.Counts[ms[i].State]++
			d.Missions = append(d.Missions, line)
		}
		d.Escalations, err = r.EscalationList(ctx, EscalationFilter{State: domain.EscalationOpen, VoyageID: id, Limit: 100})
		return err
	})
	return d, err
}

func missionLine(ctx context.Context, r Reader, m *domain.Mission, now time.Time, paused bool, live []domain.Mission, leader Leader) (MissionLine, error) {
	l := MissionLine{ID: m.ID, Key: m.Key, Title: m.Title, State: m.State, Landing: m.Landing, Kind: m.Kind,
		Attempt: m.Attempt, Priority: m.Priority, CostUSD: m.Usage.CostUSD}
	if m.Result != nil {
		l.Summary = domain.Clip(m.Result.Summary, 300)
	}
	if m.State.Runnable() {
		var err error
		l.Why, err = whyNotRunning(ctx, r, m, now, paused, live, leader)
		return l, err
	}
	if m.State == domain.StateCompleted && !m.Landing.Satisfies() {
		var err error
		l.Why, err = landingWhy(ctx, r, m)
		return l, err
	}
	if m.State == domain.StateBlocked || m.State == domain.StateFailed {
		msg := decisionReason(m)
		if m.Decision == nil && m.EscalationID != "" {
			// blocked by an escalation (an upstream mission failed, a block_mission …): its
			// reason says why, not "no decision recorded"
			msg = "waiting for escalation " + m.EscalationID
			if esc, err := r.EscalationGet(ctx, m.EscalationID); err == nil {
				msg += ": " + esc.Reason
			}
		}
		l.Why = []Reason{{Code: WhyState, Message: msg}}
	}
	return l, nil
}

// Status is the scheduler at a glance.
type Status struct {
	Counts          map[domain.MissionState]int `json:"counts"`
	Paused          bool                        `json:"paused"`
	ActiveVoyages   []domain.Voyage             `json:"active_voyages,omitempty"`
	OpenEscalations int                         `json:"open_escalations"`
	Agents          []domain.Agent              `json:"agents,omitempty"`
	Leader          Leader                      `json:"leader"`
	// Nodes are the node leases of a cluster (several scheduler processes sharing one
	// PostgreSQL store), by name, live or not; none on a single node.
	Nodes []Node `json:"nodes,omitempty"`
}

// Status reads counters kept in the same transactions as the missions (never counting rows),
// the pause flag, open voyages and escalations, agents and the leader's phase.
func (e *Engine) Status(ctx context.Context) (Status, error) {
	var s Status
	err := e.view(ctx, func(r Reader) error {
		var err error
		if s.Counts, err = r.MissionCounts(ctx); err != nil {
			return err
		}
		if s.Paused, err = r.Paused(ctx); err != nil {
			return err
		}
		if s.ActiveVoyages, err = r.VoyageList(ctx, []domain.VoyageState{domain.VoyageOpen, domain.VoyageActive, domain.VoyageBlocked}, 20); err != nil {
			return err
		}
		escs, err := r.EscalationList(ctx, EscalationFilter{State: domain.EscalationOpen, Limit: 1000})
		if err != nil {
			return err
		}
		s.OpenEscalations = len(escs)
		if s.Agents, err = r.AgentList(ctx); err != nil {
			return err
		}
		if s.Leader, err = r.LeaderGet(ctx); err != nil {
			return err
		}
		s.Nodes, err = r.NodeList(ctx)
		return err
	})
	return s, err
}

// Events returns events in sequence order after f.AfterSeq.
func (e *Engine) Events(ctx context.Context, f EventFilter) ([]domain.Event, error) {
	return viewValue(ctx, e, func(r Reader) ([]domain.Event, error) { return r.EventList(ctx, f) })
}

// Escalations lists escalations.
func (e *Engine) Escalations(ctx context.Context, f EscalationFilter) ([]domain.Escalation, error) {
	return viewValue(ctx, e, func(r Reader) ([]domain.Escalation, error) { return r.EscalationList(ctx, f) })
}

// Agents lists the agents the scheduler knows.
func (e *Engine) Agents(ctx context.Context) ([]domain.Agent, error) {
	return viewValue(ctx, e, func(r Reader) ([]domain.Agent, error) { return r.AgentList(ctx) })
}

// AgentsSeenSince lists the agents seen at or after since (at most 1,000, most recent first).
func (e *Engine) AgentsSeenSince(ctx context.Context, since time.Time) ([]domain.Agent, error) {
	return viewValue(ctx, e, func(r Reader) ([]domain.Agent, error) { return r.AgentsSeenSince(ctx, since) })
}

// TouchAgent records that an agent was seen (external agents on each call, managed profiles
// at start).
func (e *Engine) TouchAgent(ctx context.Context, a domain.Agent) error {
	a.LastSeen = e.Now()
	err := e.store.Update(ctx, func(tx Tx) error { return tx.AgentUpsert(ctx, &a) })
	if err == nil {
		e.hub.Publish(Change{Type: ChangeAgentSeen})
	}
	return err
}

// Summary is the scheduler at a glance, from counters and counts only (cheap enough to call on
// every status request).
type Summary struct {
	Counts          map[domain.MissionState]int `json:"counts"`
	Paused          bool                        `json:"paused"`
	Voyages         map[domain.VoyageState]int  `json:"voyages"`
	RecentVoyages   []domain.Voyage             `json:"recent_voyages,omitempty"` // active or blocked, newest first
	OpenEscalations int                         `json:"open_escalations"`
	Agents          int                         `json:"agents"`
	Leader          Leader                      `json:"leader"`
	// Waiting counts the missions the planner holds back, per reason code (its last
	// decision; empty while no loop leads).
	Waiting map[string]int `json:"waiting"`
	// Nodes are the node leases of a cluster, as in Status.
	Nodes []Node `json:"nodes,omitempty"`
}

// Summary reads the per-state mission counters (kept in the same transactions as the
// missions), voyage counts, the few most recent voyages in flight (at most recent), the number
// of open escalations and agents, and the leader, in one read snapshot.
func (e *Engine) Summary(ctx context.Context, recent int) (Summary, error) {
	var s Summary
	err := e.view(ctx, func(r Reader) error {
		var err error
		if s.Counts, err = r.MissionCounts(ctx); err != nil {
			return err
		}
		if s.Paused, err = r.Paused(ctx); err != nil {
			return err
		}
		if s.Voyages, err = r.VoyageCounts(ctx); err != nil {
			return err
		}
		if recent > 0 {
			if s.RecentVoyages, err = r.VoyageList(ctx, []domain.VoyageState{domain.VoyageActive, domain.VoyageBlocked}, recent); err != nil {
				return err
			}
		}
		if s.OpenEscalations, err = r.EscalationCount(ctx, domain.EscalationOpen); err != nil {
			return err
		}
		if s.Agents, err = r.AgentCount(ctx); err != nil {
			return err
		}
		if s.Leader, err = r.LeaderGet(ctx); err != nil {
			return err
		}
		if s.Nodes, err = r.NodeList(ctx); err != nil {
			return err
		}
		s.Waiting = map[string]int{}
		if s.Leader.Owner != "" && s.Leader.ExpiresAt.After(e.Now()) {
			s.Waiting, err = r.HoldCounts(ctx)
		}
		return err
	})
	return s, err
}
