// Package planner is the scheduler's decision, as a pure function: Compute takes a Snapshot of
// the store (read by the scheduler in one read transaction), the time, the limits and the
// agent profiles, and returns a Plan — what to dispatch (mission, profile, model, score
// breakdown), what is held back and why, what to preempt and what to escalate, and which
// landings move now (grouped per target branch) and why the others wait. It reads no
// clock, store, host or process; the same input always gives the same plan, so every rule of
// design brief §3 and §5 is testable with a table. The scheduler applies the plan (dispatch,
// record holds, escalate, preempt) and owns every side effect.
//
// The runnable rule itself is engine.Blockers (pure, shared with explain and why_not_running
// so that the text that explains and the rule that decides come from one place); it moves here
// with the domain types once they leave package engine.
package planner

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Profile is what the planner knows of one configured (managed) agent profile.
type Profile struct {
	Name             string
	Capabilities     []string
	Personas         []string // allowed personas; empty = any
	PreferredPersona string
	Confidence       float64  // declared success prior in (0, 1]
	Models           []string // models it may run, the first its default; empty = any
	MaxConcurrency   int      // its simultaneous attempts
	// LimitGroup names the provider usage window it shares with other profiles ("": its
	// own, by its name; see Group).
	LimitGroup string
}

// Limits are the scheduler's configured limits that the decision applies.
type Limits struct {
	MaxConcurrency int // managed attempts in flight, over all profiles
	PerRepository  int // attempts in flight per repository (ours and pull-mode agents')
	// UrgentPriority: a mission at or under it that waits only for a slot may preempt.
	UrgentPriority int
	// UnclaimedGrace is how long a mission no profile can take waits for an agent to claim
	// it before it is escalated as no_agent.
	UnclaimedGrace time.Duration
	// ExternalAgentTTL: an external agent seen within it counts as connected.
	ExternalAgentTTL time.Duration
}

// Snapshot is the state one planning step decides on.
type Snapshot struct {
	// Missions are the candidates, pending and interrupted missions in pick order.
	Missions []domain.Mission
	// Edges are each candidate's edges (engine.ReadEdges), by mission id.
	Edges map[string]engine.Edges
	// Paused is the scheduler's pause flag.
	Paused bool
	// Running is every leased or running mission.
	Running []domain.Mission
	// Node is the planning node in cluster mode ("" on a single node): the global and
	// per-profile limits count only its attempts (Mission.Node); the per-repository limit,
	// write areas and dependencies count every node's.
	Node string
	// Yieldable names the running missions that can be asked to yield (a pull-mode agent, or
	// a managed agent of this process that speaks the yield message).
	Yieldable map[string]bool
	// Voyages are the candidates' voyages, by id.
	Voyages map[string]domain.Voyage
	// SubjectModels is, by review mission id, the model its subject ran (a reviewer avoids
	// it when its profile offers another).
	SubjectModels map[string]string
	// Holds are the holds the last planning step recorded, by mission id.
	Holds map[string]engine.Hold
	// Outcomes is the attempt history per profile and persona.
	Outcomes []engine.OutcomeCount
	// Agents are the agents seen recently (only external ones within ExternalAgentTTL count).
	Agents []domain.Agent
	// Readings are the host's resource readings (nil: not taken, the gate is open).
	Readings []Reading
	// Landing is what the landing part of the plan decides on (Landings).
	Landing LandingSnapshot
	// RateWindows are the limit groups' paused or warned usage windows, by group.
	RateWindows map[string]engine.RateWindow
	// TokenLimits are candidates' own token limits, by mission id (absent: none, or nothing
	// spent yet): engine.VoyageHold's tokens.
	TokenLimits map[string]int64
	// ProfileHolds are the profiles given no new work, by name, with why (a daily budget
	// spent: engine.ProfileDayHolds).
	ProfileHolds map[string]engine.Reason
}

// Dispatch is one planned assignment.
type Dispatch struct {
	Mission domain.Mission
	Profile string
	Model   string         // "" lets the profile's runtime choose
	Score   domain.Score   // the chosen profile's score
	Scores  []domain.Score // every eligible free profile's score, for the record
}

// Preemption asks a running mission to checkpoint and yield at its next boundary.
type Preemption struct {
	MissionID string // the running mission that yields
	For       string // the urgent mission that waits for its slot
	Reason    string
}

// Plan is what one planning step decided.
type Plan struct {
	// Dispatch are the assignments, in pick order.
	Dispatch []Dispatch
	// Held is every candidate held back, in pick order, with the first reason of its plan
	// (what RecordHolds stores; a candidate absent from it is not held).
	Held []engine.Hold
	// Runnable counts the candidates the runnable rule allows (dispatched or held by the
	// planner's own reasons).
	Runnable int
	// Preempt is at most one preemption.
	Preempt []Preemption
	// Escalate are the no_agent escalations to raise (each at most once: EscalateOnce).
	Escalate []engine.EscalationSpec
	// Cap is how many of our agents may run at once after the resource gate; CapWhy says
	// why it is below the configured concurrency ("" when it is not).
	Cap    int
	CapWhy string
	// Land are the landings that move now, grouped per target (Landings).
	Land []LandingGroup
	// LandWait is every landing that does not move now, with why (recorded as holds, like
	// Held), and the clean-checkout retries that move, with the wait they keep.
	LandWait []engine.Hold
}

// Compute decides one planning step: for each candidate in pick order, the runnable rule
// (engine.Blockers) first (a mission already held for a spent budget or a rate-limited
// profile keeps that hold while a blocker that passes by itself applies too: blockedHold), then its voyage's or its own cost limit and requirements, then
// whether a profile offers what it needs (or an agent may claim it within the grace period),
// then the resource gate and the concurrency limits, then the best free profile by score
// (design brief §3). Each planned dispatch counts as in flight for the candidates after it,
// and as leased for their runnable rule (the acquire would refuse them too). An urgent
// mission held for a slot preempts the least urgent yieldable running mission (one per plan);
// a mission without a voyage that no agent took within the grace period is escalated once
// (its hold's code becomes no_agent). Which landings move, and why the others wait, is
// Landings. Compute is pure and deterministic.
func Compute(s Snapshot, now time.Time, lim Limits, profiles []Profile) Plan {
	s.Missions = inPickOrder(s.Missions)
	st := newState(s, now, lim, profiles)
	var p Plan
	p.Cap, p.CapWhy = st.cap, st.capWhy
	p.Land, p.LandWait = Landings(s.Landing)
	for i := range s.Missions {
		m := &s.Missions[i]
		if rs := engine.Blockers(m, st.edges(m.ID), s.Paused, st.live, now); len(rs) > 0 {
			p.Held = append(p.Held, engine.Hold{MissionID: m.ID, Reason: st.blockedHold(m, rs)})
			continue
		}
		p.Runnable++
		d, r := st.choose(m)
		if r != nil {
			p.Held = append(p.Held, engine.Hold{MissionID: m.ID, Reason: *r})
			st.afterHold(&p, m, *r)
			continue
		}
		p.Dispatch = append(p.Dispatch, d)
		st.dispatched(m, d.Profile)
	}
	return p
}

// PickOrder is design brief §3's pick order as a comparison (negative: a first): priority
// ascending, then missions of an active voyage, then resumed (interrupted) before fresh, then
// creation time, then id. The store's candidate query orders by the same keys; Compute sorts
// its candidates with it, so the plan does not depend on the order they were read in.
func PickOrder(a, b *domain.Mission) int {
	return cmp.Or(cmp.Compare(a.Priority, b.Priority),
		trueFirst(a.VoyageActive, b.VoyageActive),
		trueFirst(a.State == domain.StateInterrupted, b.State == domain.StateInterrupted),
		a.CreatedAt.Compare(b.CreatedAt),
		strings.Compare(a.ID, b.ID))
}

func trueFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// inPickOrder returns ms sorted by PickOrder (ms itself when it already is).
func inPickOrder(ms []domain.Mission) []domain.Mission {
	less := func(a, b domain.Mission) int { return PickOrder(&a, &b) }
	if slices.IsSortedFunc(ms, less) {
		return ms
	}
	out := slices.Clone(ms)
	slices.SortFunc(out, less)
	return out
}

// FirstRunnable is the id of the first candidate in pick order that the runnable rule allows
// ("" when none): the mission an acquire-next with no agent filter takes.
func FirstRunnable(s Snapshot, now time.Time) string {
	for _, m := range inPickOrder(s.Missions) {
		if len(engine.Blockers(&m, s.Edges[m.ID], s.Paused, s.Running, now)) == 0 {
			return m.ID
		}
	}
	return ""
}
