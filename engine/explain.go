package engine

import (
	"context"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"time"
)

// Reasons a mission is not running, in the order checked. Each Explain entry starts with one
// of these codes, followed by a human-readable sentence.
const (
	WhyState      = "state"
	WhyPaused     = "paused"
	WhyChildren   = "children"
	WhyBackoff    = "backoff"
	WhyHardDep    = "hard_dependency"
	WhySerialized = "serialization"
	WhyConflict   = "conflict"
	WhyExclusive  = "repository_busy"
	// The planner's reasons, on top of the runnable rules (recorded as holds, see Hold):
	WhySlots        = "slots"             // a concurrency limit (global, repository, profile) is reached
	WhyResources    = "resources"         // the machine is short of CPU, memory or disk: fewer of our agents start
	WhyWaitingAgent = "waiting_for_agent" // no profile offers what it needs: an agent may still claim it (grace period)
	WhyUnavailable  = "no_agent"          // no agent offered what it needs within the grace period: escalated
	// Reasons given when the planner has not decided:
	WhyNoLeader = "no_leader" // no scheduler loop runs on the data dir
	WhyQueued   = "queued"    // runnable; the next planning step decides
)

// Reason is one thing that keeps a mission from running.
type Reason struct {
	Code      string    `json:"code"`
	Message   string    `json:"message"`
	MissionID string    `json:"mission_id,omitempty"` // the other mission involved
	Until     time.Time `json:"until,omitzero"`       // for backoff
	// Since is when the mission began to wait for this reason (planner holds only).
	Since time.Time `json:"since,omitzero"`
}

// Transient reports whether the reason goes away by itself (time, other work finishing, a
// resume, an agent connecting) rather than needing a decision: a voyage whose missions wait
// only for transient reasons is waiting, never deadlocked.
func (r Reason) Transient() bool {
	switch r.Code {
	case WhyBackoff, WhyConflict, WhyExclusive, WhySlots, WhyChildren, WhyPaused, WhyResources,
		WhyWaitingAgent, WhyNoLeader, WhyQueued, WhyRateLimited:
		return true
	}
	return false
}

// Edge is one dependency edge of a mission with the mission at its other end, as design
// brief §3's runnable rule sees it.
type Edge struct {
	domain.Dependency
	// Other is the mission at the other end: the one depended on for an edge from the
	// mission, the one that declared the conflict for a conflict edge to it.
	Other domain.Mission
	// OtherLanding is Other's landing record when what its landing waits for depends on it
	// (lastLanding: a conflicted landing whose checks failed); nil otherwise.
	OtherLanding *domain.Landing
}

// Edges is what the runnable rule reads of a mission's graph: its own edges (soft ones
// aside) and the conflict edges other missions declared towards it.
type Edges struct {
	Deps        []Edge
	ConflictsIn []Edge
}

// Blockers is design brief §3's runnable rule in Go, the only one (the planner decides with
// it, explain and why_not_running explain with it): every reason m cannot be acquired now,
// in the order checked — state, pause, children, backoff, its edges in order, conflict edges
// towards it, an exclusive mission in the repository; nil when it could be acquired now
// (agent filters aside). live is every leased or running mission. It is pure: the callers
// read edges and live first. The acquire statement in storage encodes the same rules, and
// property tests keep the two in agreement.
func Blockers(m *domain.Mission, edges Edges, paused bool, live []domain.Mission, now time.Time) []Reason {
	if !m.State.Runnable() {
		return []Reason{{Code: WhyState, Message: fmt.Sprintf("is %s", m.State)}}
	}
	var out []Reason
	if paused {
		out = append(out, Reason{Code: WhyPaused, Message: "the scheduler is paused (resume_scheduler)"})
	}
	if m.WaitReason == WaitChildren {
		out = append(out, Reason{Code: WhyChildren, Message: "waiting for its child missions to complete"})
	}
	if m.NotBefore.After(now) {
		out = append(out, Reason{Code: WhyBackoff, Until: m.NotBefore,
			Message: "retry backoff until " + m.NotBefore.Format(time.RFC3339)})
	}
	for _, d := range edges.Deps {
		out = append(out, edgeReasons(d)...)
	}
	for _, d := range edges.ConflictsIn {
		if d.Type == domain.EdgeConflict {
			out = append(out, edgeReasons(d)...)
		}
	}
	return append(out, exclusiveReasons(m, live)...)
}

// explain applies Blockers to one mission, reading its edges from r; it returns nil when the
// mission could be acquired now (agent filters aside).
func explain(ctx context.Context, r Reader, m *domain.Mission, now time.Time, paused bool, live []domain.Mission) ([]Reason, error) {
	var edges Edges
	if m.State.Runnable() {
		var err error
		if edges, err = ReadEdges(ctx, r, m.ID); err != nil {
			return nil, err
		}
	}
	return Blockers(m, edges, paused, live, now), nil
}

// ReadEdges reads what Blockers needs of mission id's graph: its hard, serialization and
// conflict edges and the conflict edges towards it, each with the mission at the other end
// (soft edges never hold a mission back and are not read). A missing mission at the other end
// is an error.
func ReadEdges(ctx context.Context, r Reader, id string) (Edges, error) {
	var out Edges
	deps, err := r.DependenciesOf(ctx, id)
	if err != nil {
		return out, err
	}
	for _, d := range deps {
		if d.Type == domain.EdgeSoft {
			continue
		}
		u, err := r.MissionGet(ctx, d.DependsOn)
		if err != nil {
			return out, err
		}
		last, err := lastLanding(ctx, r, &u)
		if err != nil {
			return out, err
		}
		out.Deps = append(out.Deps, Edge{Dependency: d, Other: u, OtherLanding: last})
	}
	rdeps, err := r.DependentsOf(ctx, id)
	if err != nil {
		return out, err
	}
	for _, d := range rdeps {
		if d.Type != domain.EdgeConflict {
			continue
		}
		u, err := r.MissionGet(ctx, d.MissionID)
		if err != nil {
			return out, err
		}
		out.ConflictsIn = append(out.ConflictsIn, Edge{Dependency: d, Other: u})
	}
	return out, nil
}

// edgeReasons is the reason one edge holds its mission back (none when it does not).
func edgeReasons(d Edge) []Reason {
	u := &d.Other
	switch {
	case d.Type == domain.EdgeHard && !(u.State == domain.StateCompleted && u.Landing.Satisfies()):
		msg := fmt.Sprintf("waiting for hard dependency %s (%s) to complete and land: it is %s", u.ID, u.Title, u.State)
		if u.State == domain.StateCompleted {
			msg = fmt.Sprintf("waiting for hard dependency %s (%s) to land: landing is %s (%s)", u.ID, u.Title, u.Landing, landingHeld(*u, d.OtherLanding))
		}
		return []Reason{{Code: WhyHardDep, MissionID: u.ID, Message: msg}}
	case d.Type == domain.EdgeSerialization && !u.State.Terminal():
		return []Reason{{Code: WhySerialized, MissionID: u.ID, Message: fmt.Sprintf("serialised after %s (%s), which is %s", u.ID, u.Title, u.State)}}
	case d.Type == domain.EdgeConflict && u.State.Leased():
		return []Reason{{Code: WhyConflict, MissionID: u.ID, Message: fmt.Sprintf("conflicts with running %s (%s): %s", u.ID, u.Title, orDefault(d.Reason, "conflict edge"))}}
	}
	return nil
}

// landingHeld says what a completed mission's landing waits for, and who can move it (the
// table of landing waits in engine/domain/landingwait.go, told by its landing record last).
func landingHeld(u domain.Mission, last *domain.Landing) string {
	if w, ok := u.Landing.WaitAfter(last); ok {
		return w.Explain(u.ID)
	}
	return "not landed"
}

// exclusiveReasons: a mission without a write area (or serial) runs alone in its repository,
// and nothing runs beside such a mission.
func exclusiveReasons(m *domain.Mission, live []domain.Mission) []Reason {
	for _, o := range live {
		if o.ID == m.ID || o.Repository != m.Repository {
			continue
		}
		if m.Exclusive() || o.Exclusive() {
			who := "this mission declares no write area (or is serial), so it runs alone in its repository"
			if o.Exclusive() {
				who = fmt.Sprintf("%s declares no write area (or is serial) and runs alone in the repository", o.ID)
			}
			return []Reason{{Code: WhyExclusive, MissionID: o.ID,
				Message: fmt.Sprintf("repository busy: %s (%s) is %s and %s", o.ID, o.Title, o.State, who)}}
		}
	}
	return nil
}

// Explain says why a mission is not running (nil: it could be acquired now by an agent that
// matches its persona and capabilities). The scheduler adds agent and slot reasons.
func (e *Engine) Explain(ctx context.Context, id string) ([]Reason, error) {
	var out []Reason
	err := e.view(ctx, func(r Reader) error {
		m, err := r.MissionGet(ctx, id)
		if err != nil {
			return err
		}
		out, err = explainIn(ctx, r, &m, e.Now())
		return err
	})
	return out, err
}

func explainIn(ctx context.Context, r Reader, m *domain.Mission, now time.Time) ([]Reason, error) {
	paused, live, err := pausedAndLive(ctx, r)
	if err != nil {
		return nil, err
	}
	return explain(ctx, r, m, now, paused, live)
}

// pausedAndLive reads what the runnable rules need besides the mission: the pause flag and
// the leased or running missions.
func pausedAndLive(ctx context.Context, r Reader) (bool, []domain.Mission, error) {
	paused, err := r.Paused(ctx)
	if err != nil {
		return false, nil, err
	}
	live, err := r.MissionsLeased(ctx)
	return paused, live, err
}
