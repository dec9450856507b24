package planner_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// done is a completed mission of /repo (mission i) whose landing is l.
func done(i int, l domain.LandingState, opts ...func(*domain.Mission)) domain.Mission {
	return mission(i, append([]func(*domain.Mission){state(domain.StateCompleted, l)}, opts...)...)
}

func target(b string) func(*domain.Mission)           { return func(m *domain.Mission) { m.TargetBranch = b } }
func reviewed(m *domain.Mission)                      { m.Review = engine.ReviewRequired }
func attempt(n int) func(*domain.Mission)             { return func(m *domain.Mission) { m.Attempt = n } }
func kind(k domain.MissionKind) func(*domain.Mission) { return func(m *domain.Mission) { m.Kind = k } }

// round is review round n of subject's current attempt, in state st.
func round(subject domain.Mission, n int, st domain.MissionState) domain.Mission {
	r := mission(50+n, kind(domain.KindReview))
	r.State, r.SubjectID = st, subject.ID
	r.IdempotencyKey = planner.ReviewKeyPrefix(subject.ID, subject.Attempt) + string(rune('0'+n))
	return r
}

// moves renders the landing groups as "target: id/step id/step".
func moves(gs []planner.LandingGroup) []string {
	out := []string{}
	for _, g := range gs {
		var ms []string
		for _, mv := range g.Moves {
			ms = append(ms, mv.Mission.ID+"/"+string(mv.Step))
		}
		out = append(out, g.Repository+"@"+g.TargetBranch+": "+strings.Join(ms, " "))
	}
	return out
}

func waitCodes(ws []engine.Hold) map[string]string {
	out := map[string]string{}
	for _, w := range ws {
		out[w.MissionID] = w.Reason.Code
	}
	return out
}

// The landing rules, one per row: which landings of the queue move now (grouped per target,
// oldest first, each with its first step) and why each other one waits — target busy, its
// review at work, a clean-checkout retry not due, approval, a repair.
func TestLandings_Rules(t *testing.T) {
	t.Parallel()
	busyMain := map[string]bool{planner.TargetKey("/repo", "main"): true}
	lockedMain := map[string]engine.LandingLock{planner.TargetKey("/repo", "main"): {Target: planner.TargetKey("/repo", "main"), Node: "n2", ExpiresAt: t0.Add(time.Minute)}}
	cases := []struct {
		name     string
		queue    []domain.Mission
		awaiting []domain.Mission
		reviews  map[string][]domain.Mission
		repairs  map[string][]domain.Mission
		policies map[string]planner.LandingPolicy
		busy     map[string]bool
		locks    map[string]engine.LandingLock
		retryAt  map[string]time.Time
		moves    []string
		waits    map[string]string
	}{
		{name: "pending lands", queue: []domain.Mission{done(1, domain.LandingPending)},
			moves: []string{"/repo@: m01/land"}, waits: map[string]string{}},
		{name: "grouped per target in the order of their oldest mission",
			queue: []domain.Mission{done(1, domain.LandingPending, target("dev")), done(2, domain.LandingPending),
				done(3, domain.LandingApproved, target("dev")), done(4, domain.LandingPending, repo("/other"))},
			moves: []string{"/repo@dev: m01/land m03/land", "/repo@: m02/land", "/other@: m04/land"}, waits: map[string]string{}},
		{name: "the repository's target branch groups with the missions that name it",
			queue:    []domain.Mission{done(1, domain.LandingPending), done(2, domain.LandingPending, target("main"))},
			policies: map[string]planner.LandingPolicy{"/repo": {TargetBranch: "main"}},
			moves:    []string{"/repo@main: m01/land m02/land"}, waits: map[string]string{}},
		{name: "target busy waits, another target moves",
			queue: []domain.Mission{done(1, domain.LandingPending, target("main")), done(2, domain.LandingPending, target("dev"))},
			busy:  busyMain, moves: []string{"/repo@dev: m02/land"}, waits: map[string]string{"m01": domain.LandWaitTargetBusy}},
		{name: "a target another node holds the landing lock of waits, another target moves",
			queue: []domain.Mission{done(1, domain.LandingPending, target("main")), done(2, domain.LandingPending, target("dev"))},
			locks: lockedMain, moves: []string{"/repo@dev: m02/land"}, waits: map[string]string{"m01": domain.LandWaitTargetBusy}},
		{name: "a lock of the same branch of another repository does not hold it",
			queue: []domain.Mission{done(1, domain.LandingPending, target("main"), repo("/other"))},
			locks: lockedMain, moves: []string{"/other@main: m01/land"}, waits: map[string]string{}},
		{name: "a locked target holds its review and its approval request too",
			queue:    []domain.Mission{done(1, domain.LandingPending, target("main"), reviewed), done(2, domain.LandingPending, target("main"))},
			policies: map[string]planner.LandingPolicy{"/repo": {Approval: true}},
			locks:    lockedMain, moves: []string{}, waits: map[string]string{"m01": domain.LandWaitTargetBusy, "m02": domain.LandWaitTargetBusy}},
		{name: "review required without a round starts one",
			queue: []domain.Mission{done(1, domain.LandingPending, reviewed)},
			moves: []string{"/repo@: m01/review"}, waits: map[string]string{}},
		{name: "review at work waits for the verdict",
			queue:   []domain.Mission{done(1, domain.LandingReview, reviewed)},
			reviews: map[string][]domain.Mission{"m01": {round(done(1, domain.LandingReview), 1, domain.StateRunning)}},
			moves:   []string{}, waits: map[string]string{"m01": domain.LandWaitReview}},
		{name: "a finished review round moves to read its verdict",
			queue:   []domain.Mission{done(1, domain.LandingReview, reviewed)},
			reviews: map[string][]domain.Mission{"m01": {round(done(1, domain.LandingReview), 1, domain.StateCompleted)}},
			moves:   []string{"/repo@: m01/review"}, waits: map[string]string{}},
		{name: "the latest round counts: round 1 done, round 2 at work",
			queue: []domain.Mission{done(1, domain.LandingReview, reviewed)},
			reviews: map[string][]domain.Mission{"m01": {round(done(1, domain.LandingReview), 1, domain.StateCompleted),
				round(done(1, domain.LandingReview), 2, domain.StatePending)}},
			moves: []string{}, waits: map[string]string{"m01": domain.LandWaitReview}},
		{name: "a round of an earlier attempt does not hold the new attempt",
			queue:   []domain.Mission{done(1, domain.LandingPending, reviewed, attempt(2))},
			reviews: map[string][]domain.Mission{"m01": {round(done(1, domain.LandingReview, attempt(1)), 1, domain.StateRunning)}},
			moves:   []string{"/repo@: m01/review"}, waits: map[string]string{}},
		{name: "an approved landing skips its review and its approval",
			queue:    []domain.Mission{done(1, domain.LandingApproved, reviewed)},
			policies: map[string]planner.LandingPolicy{"/repo": {Approval: true}},
			moves:    []string{"/repo@: m01/land"}, waits: map[string]string{}},
		{name: "a review mission is not reviewed",
			queue: []domain.Mission{done(1, domain.LandingPending, reviewed, kind(domain.KindReview))},
			moves: []string{"/repo@: m01/land"}, waits: map[string]string{}},
		{name: "policy approval asks for approval",
			queue:    []domain.Mission{done(1, domain.LandingPending)},
			policies: map[string]planner.LandingPolicy{"/repo": {Approval: true}},
			moves:    []string{"/repo@: m01/ask_approval"}, waits: map[string]string{}},
		{name: "policy none leaves the branch",
			queue:    []domain.Mission{done(1, domain.LandingPending)},
			policies: map[string]planner.LandingPolicy{"/repo": {Leave: true}},
			moves:    []string{"/repo@: m01/leave"}, waits: map[string]string{}},
		{name: "a checkout retry not due waits; a due one moves",
			queue:   []domain.Mission{done(1, domain.LandingWaiting), done(2, domain.LandingWaiting)},
			retryAt: map[string]time.Time{"m01": t0.Add(10 * time.Second)},
			moves:   []string{"/repo@: m02/land"}, waits: map[string]string{"m01": domain.LandWaitCheckout, "m02": domain.LandWaitCheckout}},
		{name: "approval and repair wait",
			awaiting: []domain.Mission{done(1, domain.LandingApproval), done(2, domain.LandingRepair)},
			repairs:  map[string][]domain.Mission{"m02": {with(mission(9, kind(domain.KindRepair)), state(domain.StateRunning, domain.LandingNone))}},
			moves:    []string{}, waits: map[string]string{"m01": domain.LandWaitApproval, "m02": domain.LandWaitRepair}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := planner.LandingSnapshot{LandingView: engine.LandingView{Queue: c.queue, Awaiting: c.awaiting, Reviews: c.reviews, Repairs: c.repairs},
				Policies: c.policies, Busy: c.busy, Locks: c.locks, RetryAt: c.retryAt}
			gs, ws := planner.Landings(s)
			require.Equal(t, c.moves, moves(gs))
			require.Equal(t, c.waits, waitCodes(ws))
			for _, w := range ws {
				require.NotEmpty(t, w.Reason.Message, "%s waits without a sentence", w.MissionID)
			}
		})
	}
}

// Every wait says what it waits for, naming what a person or the Main Agent can do: the
// reviewer at work, the next checkout retry, the approve_landing call, the repair mission,
// the target in flight.
func TestLandings_WaitsExplainThemselves(t *testing.T) {
	t.Parallel()
	subject := done(1, domain.LandingReview, reviewed)
	rv := round(subject, 1, domain.StateRunning)
	fix := with(mission(9, kind(domain.KindRepair)), state(domain.StateRunning, domain.LandingNone))
	due := t0.Add(10 * time.Second)
	s := planner.LandingSnapshot{
		LandingView: engine.LandingView{
			Queue:    []domain.Mission{subject, done(2, domain.LandingWaiting), done(3, domain.LandingPending, target("main"))},
			Awaiting: []domain.Mission{done(4, domain.LandingApproval), done(5, domain.LandingRepair)},
			Reviews:  map[string][]domain.Mission{subject.ID: {rv}},
			Repairs:  map[string][]domain.Mission{"m05": {fix}},
		},
		Busy:    map[string]bool{planner.TargetKey("/repo", "main"): true},
		RetryAt: map[string]time.Time{"m02": due},
	}
	gs, ws := planner.Landings(s)
	require.Empty(t, gs)
	why := map[string]engine.Reason{}
	for _, w := range ws {
		why[w.MissionID] = w.Reason
	}
	require.Equal(t, rv.ID, why["m01"].MissionID)
	require.Contains(t, why["m01"].Message, "review mission "+rv.ID)
	require.Contains(t, why["m02"].Message, "local changes in the same files")
	require.Contains(t, why["m03"].Message, "main of /repo is in flight")
	require.Contains(t, why["m04"].Message, "approve_landing m04")
	require.Equal(t, fix.ID, why["m05"].MissionID)
	require.Contains(t, why["m05"].Message, "repair mission "+fix.ID)
}

// A landing onto a target whose landing lock another node holds names that node, from
// domain.TargetBusyText, and no time: the lock's renewals do not change the reason.
func TestLandings_ALockedTargetNamesItsNodeAndUntilWhen(t *testing.T) {
	t.Parallel()
	until := t0.Add(time.Minute)
	k := planner.TargetKey("/repo", "")
	s := planner.LandingSnapshot{
		LandingView: engine.LandingView{Queue: []domain.Mission{done(1, domain.LandingPending)}},
		Locks:       map[string]engine.LandingLock{k: {Target: k, Node: "east-2", ExpiresAt: until}},
	}
	gs, ws := planner.Landings(s)
	require.Empty(t, gs)
	require.Len(t, ws, 1)
	r := ws[0].Reason
	require.Equal(t, domain.LandWaitTargetBusy, r.Code)
	require.Equal(t, domain.TargetBusyText("/repo", "", "east-2", true), r.Message)
	require.Contains(t, r.Message, "node east-2 is landing onto the default branch of /repo")
	require.True(t, r.Until.IsZero())
	s.Locks[k] = engine.LandingLock{Target: k, Node: "east-2", ExpiresAt: until.Add(20 * time.Second)} // renewed
	_, again := planner.Landings(s)
	require.Equal(t, r, again[0].Reason, "a renewal does not change the reason")

	s.Locks, s.Busy, s.Node = nil, map[string]bool{k: true}, "west-1"
	_, ws = planner.Landings(s)
	require.Equal(t, "node west-1 is landing onto the default branch of /repo: this one is taken when it is done", ws[0].Reason.Message,
		"in cluster mode this node's own worker is named too")
	require.True(t, ws[0].Reason.Until.IsZero())
}

// The rule that decides which landings the queue works on and the text that explains the
// others come from one table: every state a landing can wait in has a code and a sentence,
// and exactly the queued ones are the states a landing attempt starts from.
func TestLandingWaits_OneTable(t *testing.T) {
	t.Parallel()
	for _, l := range domain.AllLandingStates() {
		w, ok := l.Wait()
		if l.Satisfies() || l == domain.LandingNone {
			require.False(t, ok, "%s waits for nothing", l)
			continue
		}
		require.True(t, ok, "%s has no wait", l)
		require.True(t, domain.IsLandingWait(w.Code), "%s: code %s", l, w.Code)
		require.NotEmpty(t, w.Explain("m01"))
		require.Equal(t, w.Queued, l.Queued())
	}
	require.True(t, domain.IsLandingWait(domain.LandWaitTargetBusy))
	require.False(t, domain.IsLandingWait(engine.WhySlots))
}

// Compute carries the landing part: a plan says which landings move beside what it
// dispatches, whatever the candidates.
func TestCompute_CarriesTheLandingMoves(t *testing.T) {
	t.Parallel()
	s := snap([]domain.Mission{mission(1)})
	s.Landing = planner.LandingSnapshot{LandingView: engine.LandingView{Queue: []domain.Mission{done(2, domain.LandingPending)},
		Awaiting: []domain.Mission{done(3, domain.LandingApproval)}}}
	p := planner.Compute(s, t0, lim, []planner.Profile{gen})
	require.Equal(t, []string{"m01→gen"}, dispatched(p))
	require.Equal(t, []string{"/repo@: m02/land"}, moves(p.Land))
	require.Equal(t, map[string]string{"m03": domain.LandWaitApproval}, waitCodes(p.LandWait))
	require.Empty(t, heldCodes(p), "landing waits are not candidate holds")
}

// The gates come in one order: review (unless already reviewed in this pass or approved),
// then the policy, then the landing.
func TestNextStep_Order(t *testing.T) {
	t.Parallel()
	m := done(1, domain.LandingPending, reviewed)
	appr := planner.LandingPolicy{Approval: true}
	require.Equal(t, planner.StepReview, planner.NextStep(&m, appr, false))
	require.Equal(t, planner.StepAskApproval, planner.NextStep(&m, appr, true))
	require.Equal(t, planner.StepLeave, planner.NextStep(&m, planner.LandingPolicy{Leave: true, Approval: true}, true))
	require.Equal(t, planner.StepLand, planner.NextStep(&m, planner.LandingPolicy{}, true))
	m.Landing = domain.LandingApproved
	require.Equal(t, planner.StepLand, planner.NextStep(&m, appr, false))
}

// A landing waiting for a clean checkout says the same whether its retry is due (it moves)
// or not (it waits): its hold is written once, not on every retry.
func TestLandings_CheckoutWaitIsStableAcrossRetries(t *testing.T) {
	t.Parallel()
	q := []domain.Mission{done(1, domain.LandingWaiting)}
	due, waiting := planner.Landings(planner.LandingSnapshot{LandingView: engine.LandingView{Queue: q}})
	notDue, held := planner.Landings(planner.LandingSnapshot{LandingView: engine.LandingView{Queue: q},
		RetryAt: map[string]time.Time{"m01": t0.Add(10 * time.Second)}})
	require.Equal(t, []string{"/repo@: m01/land"}, moves(due))
	require.Empty(t, notDue)
	require.Len(t, waiting, 1)
	require.Equal(t, waiting, held)
	require.Equal(t, domain.LandWaitCheckout, held[0].Reason.Code)
}
