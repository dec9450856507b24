package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// load is what is in flight, for the concurrency limits and the scores.
type load struct {
	global    int // our managed agents' attempts (missions of a configured profile)
	byProfile map[string]int
	byRepo    map[string]int // every attempt, ours and pull-mode agents'
}

// InFlight counts the running missions whose profile is one of profiles, of node (cluster
// mode; "" counts every one): the "ours" the resource readings subtract (see Reading).
func InFlight(running []domain.Mission, profiles []Profile, node string) int {
	return newLoad(running, profiles, node).global
}

// newLoad counts what is in flight. The global and per-profile counts are of node's attempts
// when node is set (cluster mode: the limits are per node); the per-repository count is of
// every attempt (the repository is shared).
func newLoad(running []domain.Mission, profiles []Profile, node string) load {
	l := load{byProfile: map[string]int{}, byRepo: map[string]int{}}
	for i := range running {
		m := &running[i]
		l.byRepo[m.Repository]++
		if node != "" && m.Node != node {
			continue
		}
		if _, ok := profileNamed(profiles, m.Profile); ok {
			l.global++
			l.byProfile[m.Profile]++
		}
	}
	return l
}

func profileNamed(ps []Profile, name string) (Profile, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// state is one Compute call's working state: the snapshot, what it planned so far.
type state struct {
	s         Snapshot
	now       time.Time
	lim       Limits
	profiles  []Profile
	load      load
	cap       int
	capWhy    string
	live      []domain.Mission       // running missions and the ones planned so far (as leased)
	planned   map[string]bool        // missions planned for dispatch
	outcomes  map[string][2]int      // profile/persona → total, completed
	external  []domain.Agent         // external agents seen within the TTL
	preempted bool                   // a preemption is planned
	escalated map[string]bool        // missions with a planned escalation
	holds     map[string]engine.Hold // the previous holds
}

func newState(s Snapshot, now time.Time, lim Limits, profiles []Profile) *state {
	st := &state{s: s, now: now, lim: lim, profiles: profiles, load: newLoad(s.Running, profiles, s.Node),
		live: append([]domain.Mission(nil), s.Running...), planned: map[string]bool{},
		outcomes: map[string][2]int{}, escalated: map[string]bool{}, holds: s.Holds}
	st.cap, st.capWhy, _ = ResourceCap(s.Readings, lim.MaxConcurrency)
	for _, o := range s.Outcomes {
		st.outcomes[o.Profile+"/"+o.Persona] = [2]int{o.Total, o.Completed}
	}
	cutoff := now.Add(-lim.ExternalAgentTTL)
	for _, a := range s.Agents {
		if a.Kind == "external" && a.LastSeen.After(cutoff) {
			st.external = append(st.external, a)
		}
	}
	return st
}

// edges is a candidate's edges with the missions planned so far seen as leased.
func (st *state) edges(id string) engine.Edges {
	e := st.s.Edges[id]
	if len(st.planned) == 0 {
		return e
	}
	return engine.Edges{Deps: st.asLeased(e.Deps), ConflictsIn: st.asLeased(e.ConflictsIn)}
}

func (st *state) asLeased(es []engine.Edge) []engine.Edge {
	out := es
	for i := range es {
		if !st.planned[es[i].Other.ID] {
			continue
		}
		if &out[0] == &es[0] {
			out = append([]engine.Edge(nil), es...)
		}
		out[i].Other.State = domain.StateLeased
	}
	return out
}

// dispatched counts a planned dispatch as in flight.
func (st *state) dispatched(m *domain.Mission, profile string) {
	st.planned[m.ID] = true
	l := *m
	l.State, l.Profile, l.Node = domain.StateLeased, profile, st.s.Node
	st.live = append(st.live, l)
	st.load.global++
	st.load.byProfile[profile]++
	st.load.byRepo[m.Repository]++
}

// choose picks the profile for a runnable mission, or says why it waits: its voyage or cost
// limit, no profile offering what it needs, the resource gate, then the concurrency limits.
func (st *state) choose(m *domain.Mission) (Dispatch, *engine.Reason) {
	var v *domain.Voyage
	if vo, ok := st.s.Voyages[m.VoyageID]; ok && m.VoyageID != "" {
		v = &vo
	}
	if r := engine.VoyageHold(v, m, st.s.TokenLimits[m.ID]); r != nil {
		return Dispatch{}, r
	}
	eligible, models := st.eligible(m, st.s.SubjectModels[m.ID])
	if len(eligible) == 0 {
		r := st.unavailable(m, st.holds)
		return Dispatch{}, &r
	}
	eligible, r := st.unpaused(eligible)
	if r != nil {
		return Dispatch{}, r
	}
	if r := st.slotReason(m); r != nil {
		return Dispatch{}, r
	}
	var free []Candidate
	var full []string
	var held *engine.Reason
	for _, c := range eligible {
		if r, ok := st.s.ProfileHolds[c.Name]; ok {
			held = &r
			continue
		}
		p, _ := profileNamed(st.profiles, c.Name)
		if cap, why := st.profileCap(p); st.load.byProfile[c.Name] >= cap {
			full = append(full, fmt.Sprintf("%s (%d/%d%s)", c.Name, st.load.byProfile[c.Name], cap, why))
			continue
		}
		free = append(free, c)
	}
	best, all, ok := Assign(m, free)
	if !ok && held != nil && len(full) == 0 {
		return Dispatch{}, held // every profile that could take it has spent its day
	}
	if !ok {
		return Dispatch{}, &engine.Reason{Code: engine.WhySlots, Message: "concurrency limit of profile " + strings.Join(full, ", ") + " reached" + st.onNode()}
	}
	return Dispatch{Mission: *m, Profile: best.Profile, Model: models[best.Profile], Score: best, Scores: all}, nil
}

// slotReason applies the resource gate and the global and per-repository limits.
func (st *state) slotReason(m *domain.Mission) *engine.Reason {
	l := &st.load
	switch {
	case l.global >= st.cap && st.capWhy != "":
		return &engine.Reason{Code: engine.WhyResources, Message: fmt.Sprintf("%s: at most %d of our agents run at once until it passes (%d running; doctor shows the readings)",
			st.capWhy, st.cap, l.global)}
	case l.global >= st.lim.MaxConcurrency:
		return &engine.Reason{Code: engine.WhySlots, Message: fmt.Sprintf("global concurrency limit reached (%d running%s, max_concurrency %d)", l.global, st.onNode(), st.lim.MaxConcurrency)}
	case l.byRepo[m.Repository] >= st.lim.PerRepository:
		return &engine.Reason{Code: engine.WhySlots, Message: fmt.Sprintf("repository concurrency limit reached (%d running in %s, per_repository %d)",
			l.byRepo[m.Repository], m.Repository, st.lim.PerRepository)}
	}
	return nil
}

// onNode names the node whose limits apply (cluster mode), for reasons: "" on a single node.
func (st *state) onNode() string {
	if st.s.Node == "" {
		return ""
	}
	return " on node " + st.s.Node
}

// afterHold plans what a planner hold calls for: an urgent mission waiting for a slot may
// preempt, and a mission without a voyage that no agent took within the grace period is
// escalated (a voyage's missions are reported by the voyage's settlement instead).
func (st *state) afterHold(p *Plan, m *domain.Mission, r engine.Reason) {
	switch r.Code {
	case engine.WhySlots, engine.WhyResources:
		if pr, ok := st.preemption(m); ok {
			p.Preempt = append(p.Preempt, pr)
		}
	case engine.WhyRateLimited:
		st.deadlineInWindow(p, m, r)
	case engine.WhyUnavailable:
		if m.VoyageID != "" || st.holds[m.ID].Reason.Code == engine.WhyUnavailable || st.escalated[m.ID] {
			return // the voyage reports it, or it was escalated when the hold began
		}
		st.escalated[m.ID] = true
		p.Escalate = append(p.Escalate, noAgentEscalation(m, r))
	}
}

func noAgentEscalation(m *domain.Mission, r engine.Reason) engine.EscalationSpec {
	return engine.EscalationSpec{MissionIDs: []string{m.ID}, Route: domain.RouteMainAgent,
		Kind: engine.KindNoAgent, Reason: fmt.Sprintf("mission %s (%s): %s", m.ID, m.Title, r.Message),
		DecisionRequired: "configure an agent profile that offers what it needs, start an agent that claims it, change its persona or capabilities (update_mission), or cancel it",
		SafeNextStep:     "get_mission " + m.ID + " shows what it needs; cancel_mission stops it"}
}

// preemption: an urgent mission that waits only for a slot asks the least urgent running
// mission (less urgent than it, yieldable, not already asked) to yield; at most one per plan,
// the highest priority number first, then the highest id.
func (st *state) preemption(m *domain.Mission) (Preemption, bool) {
	if st.preempted || m.Priority > st.lim.UrgentPriority {
		return Preemption{}, false
	}
	var victim *domain.Mission
	for i := range st.s.Running {
		o := &st.s.Running[i]
		if o.State != domain.StateRunning || o.Preempt || o.Priority <= m.Priority || !st.s.Yieldable[o.ID] {
			continue
		}
		if victim == nil || o.Priority > victim.Priority || (o.Priority == victim.Priority && o.ID > victim.ID) {
			victim = o
		}
	}
	if victim == nil {
		return Preemption{}, false
	}
	st.preempted = true
	return Preemption{MissionID: victim.ID, For: m.ID,
		Reason: fmt.Sprintf("urgent mission %s (priority %d) waits for a slot", m.ID, m.Priority)}, true
}
