package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// LandingPolicy is what the planner knows of one repository's landing policy.
type LandingPolicy struct {
	// Leave: landing policy none, the branch is left for a person.
	Leave bool
	// Approval: landing policy approval, a landing waits for approve_landing.
	Approval bool
	// TargetBranch is the target of the repository's missions that name none ("": the
	// repository's default branch, resolved when the workspace was made).
	TargetBranch string
}

// LandingSnapshot is what the landing part of a plan decides on: the store's part
// (engine.LandingView) and what the landing service of this process knows.
type LandingSnapshot struct {
	engine.LandingView
	// Policies are the repositories' landing policies, by repository path (a repository
	// absent lands by itself onto its default branch).
	Policies map[string]LandingPolicy
	// Busy names the targets (TargetKey) whose landing worker runs in this process.
	Busy map[string]bool
	// Node is this node's name in cluster mode ("" on a single node): a wait for this
	// process's own worker names it.
	Node string
	// Locks are the live landing locks other nodes hold (cluster mode; nil on a single
	// node), by TargetKey: a landing onto one of those targets waits.
	Locks map[string]engine.LandingLock
	// RetryAt are the landings waiting for a clean checkout whose next retry this process
	// has not reached yet, with when it is due, by mission id.
	RetryAt map[string]time.Time
}

// TargetKey names one target: a repository and its target branch (the key of its landing
// lock in cluster mode, engine.LandingTarget).
func TargetKey(repository, branch string) string { return engine.LandingTarget(repository, branch) }

// Target is the target branch mission m lands on under policies: its own, else its
// repository's ("" for the repository's default branch).
func Target(m *domain.Mission, policies map[string]LandingPolicy) string {
	if m.TargetBranch != "" {
		return m.TargetBranch
	}
	return policies[m.Repository].TargetBranch
}

// LandingStep is the first thing the landing service does with a landing that moves.
type LandingStep string

// The landing steps, in the order the landing service goes through them.
const (
	StepReview      LandingStep = "review"       // start the review round, or read its verdict
	StepLeave       LandingStep = "leave"        // landing policy none: leave the branch for a person
	StepAskApproval LandingStep = "ask_approval" // landing policy approval: wait for approve_landing
	StepLand        LandingStep = "land"         // land the workspace on the target, with the checks
)

// NextStep is the gate a completed mission's landing goes through next under its
// repository's policy: its review when required and not yet approved (unless reviewed, its
// review approved it in this pass), then the policy (none leaves it, approval asks for
// approve_landing unless approved), then the landing itself. The landing service runs the
// steps in this order.
func NextStep(m *domain.Mission, pol LandingPolicy, reviewed bool) LandingStep {
	switch {
	case !reviewed && engine.ReviewPending(m):
		return StepReview
	case pol.Leave:
		return StepLeave
	case pol.Approval && m.Landing != domain.LandingApproved:
		return StepAskApproval
	}
	return StepLand
}

// LandingMove is one landing that moves now, with the step it starts with.
type LandingMove struct {
	Mission domain.Mission
	Step    LandingStep
}

// LandingGroup is the landings of one target that move now, oldest first: one landing
// worker takes them, the ready ones land together (worktree.LandBatch).
type LandingGroup struct {
	Repository   string
	TargetBranch string // "" for the repository's default branch
	Moves        []LandingMove
}

// Key is the group's TargetKey.
func (g LandingGroup) Key() string { return TargetKey(g.Repository, g.TargetBranch) }

// Landings decides the landing part of a plan: which landings of the queue move now,
// grouped per target in the order of their oldest mission, and why each other one waits
// (one hold per mission, its code from engine/domain/landingwait.go). A queued landing waits
// when its target's worker is in flight, when another node holds its target's landing lock, when its review round is still at work, or when it
// waits for a clean checkout and its retry is not due; a landing that waits for approval or
// a repair mission waits for that. A landing waiting for a clean checkout whose retry is due
// moves and keeps its wait (the retry may find the checkout still dirty), so that its hold
// does not come and go with every retry. It is pure.
func Landings(s LandingSnapshot) ([]LandingGroup, []engine.Hold) {
	var groups []LandingGroup
	var waits []engine.Hold
	at := map[string]int{}
	for i := range s.Queue {
		m := &s.Queue[i]
		target := Target(m, s.Policies)
		if r := s.queuedWait(m, target); r != nil {
			waits = append(waits, engine.Hold{MissionID: m.ID, Reason: *r})
			continue
		}
		if m.Landing == domain.LandingWaiting {
			// retried now, it still waits for the checkout until the retry lands it: the wait
			// stays the same across retries (one hold, one log line, not one per retry)
			waits = append(waits, engine.Hold{MissionID: m.ID, Reason: stateWait(m)})
		}
		k := TargetKey(m.Repository, target)
		if _, ok := at[k]; !ok {
			at[k] = len(groups)
			groups = append(groups, LandingGroup{Repository: m.Repository, TargetBranch: target})
		}
		g := &groups[at[k]]
		g.Moves = append(g.Moves, LandingMove{Mission: *m, Step: NextStep(m, s.Policies[m.Repository], false)})
	}
	for i := range s.Awaiting {
		waits = append(waits, engine.Hold{MissionID: s.Awaiting[i].ID, Reason: s.awaitingWait(&s.Awaiting[i])})
	}
	return groups, waits
}

// queuedWait is why a queued landing does not move now (nil: it moves).
func (s LandingSnapshot) queuedWait(m *domain.Mission, target string) *engine.Reason {
	k := TargetKey(m.Repository, target)
	if s.Busy[k] {
		return &engine.Reason{Code: domain.LandWaitTargetBusy, Message: domain.TargetBusyText(m.Repository, target, s.Node, false)}
	}
	if l, ok := s.Locks[k]; ok {
		// No time in the reason: the lock's expiry moves at every renewal, and a reason that
		// changed would be recorded (and logged) again every 20 s while the landing waits.
		return &engine.Reason{Code: domain.LandWaitTargetBusy, Message: domain.TargetBusyText(m.Repository, target, l.Node, true)}
	}
	if _, ok := s.RetryAt[m.ID]; ok && m.Landing == domain.LandingWaiting {
		r := stateWait(m)
		return &r
	}
	if engine.ReviewPending(m) {
		if latest, _ := LatestReview(s.Reviews[m.ID], m); latest != nil && !latest.State.Terminal() {
			return &engine.Reason{Code: domain.LandWaitReview, MissionID: latest.ID, Message: fmt.Sprintf(
				"its reviewer's verdict comes first: review mission %s (%s) is %s", latest.ID, latest.Title, latest.State)}
		}
	}
	return nil
}

// stateWait is what m's landing state waits for, as a reason (the table in
// engine/domain/landingwait.go).
func stateWait(m *domain.Mission) engine.Reason {
	w, _ := m.Landing.Wait()
	return engine.Reason{Code: w.Code, Message: w.Explain(m.ID)}
}

// awaitingWait is why a landing that waits for approval or a repair waits.
func (s LandingSnapshot) awaitingWait(m *domain.Mission) engine.Reason {
	r := stateWait(m)
	if m.Landing != domain.LandingRepair {
		return r
	}
	var open []string
	for _, rp := range s.Repairs[m.ID] {
		if !rp.State.Terminal() || rp.State == domain.StateCompleted {
			open = append(open, fmt.Sprintf("%s (%s, landing %s)", rp.ID, rp.State, rp.Landing))
			r.MissionID = rp.ID
		}
	}
	if len(open) > 0 {
		r.Message += ": repair mission " + strings.Join(open, ", ")
	}
	return r
}

// ReviewKeyPrefix is the idempotency key prefix of the review rounds of mission id's
// attempt; round n's key is the prefix followed by n.
func ReviewKeyPrefix(id string, attempt int) string {
	return fmt.Sprintf("review-%s-a%d-r", id, attempt)
}

// LatestReview is the latest review round of m's current attempt among rounds (the review
// missions about m) and how many rounds that attempt had; nil when it had none.
func LatestReview(rounds []domain.Mission, m *domain.Mission) (*domain.Mission, int) {
	prefix := ReviewKeyPrefix(m.ID, m.Attempt)
	var latest *domain.Mission
	n := 0
	for i := range rounds {
		if strings.HasPrefix(rounds[i].IdempotencyKey, prefix) {
			latest, n = &rounds[i], n+1
		}
	}
	return latest, n
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
