package engine_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// RecordHolds replaces the planner's holds, keeps a reason's Since while its code stays, and
// reports what changed; status counts only missions that still wait; a hold goes away with its
// mission's next planning step, and get_mission reads it while a loop leads.
func TestRecordHolds_SinceChangesAndCounts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}})
	c := b.create(engine.MissionSpec{WriteArea: []string{"c/**"}})
	slots := func(msg string) engine.Reason { return engine.Reason{Code: engine.WhySlots, Message: msg} }

	ch, err := b.e.RecordHolds(b.ctx, []engine.Hold{{MissionID: a.ID, Reason: slots("2 running")}, {MissionID: c.ID, Reason: slots("2 running")}})
	require.NoError(t, err)
	require.Len(t, ch, 2)
	begun := b.clock.Now()
	b.clock.Advance(time.Minute)
	ch, err = b.e.RecordHolds(b.ctx, []engine.Hold{{MissionID: a.ID, Reason: slots("3 running")}, {MissionID: c.ID, Reason: slots("2 running")}})
	require.NoError(t, err)
	require.Len(t, ch, 1, "only a changed")
	require.Equal(t, a.ID, ch[0].MissionID)
	require.Equal(t, "2 running", ch[0].From.Message)
	hs, err := b.e.Holds(b.ctx)
	require.NoError(t, err)
	require.True(t, hs[a.ID].Reason.Since.Equal(begun), "same code: the wait began at the first hold")

	b.clock.Advance(time.Minute)
	ch, err = b.e.RecordHolds(b.ctx, []engine.Hold{{MissionID: a.ID, Reason: engine.Reason{Code: engine.WhyResources, Message: "busy"}}})
	require.NoError(t, err)
	require.Len(t, ch, 2, "a changed code, c is no longer held")
	hs, err = b.e.Holds(b.ctx)
	require.NoError(t, err)
	require.Len(t, hs, 1)
	require.True(t, hs[a.ID].Reason.Since.Equal(b.clock.Now()), "a new code: a new wait")

	// status counts waiting missions only, and only while a loop leads
	s, err := b.e.Summary(b.ctx, 0)
	require.NoError(t, err)
	require.Empty(t, s.Waiting, "no leader: the holds are not current")
	_, err = b.e.Leadership(b.ctx, "me", time.Hour, "planning")
	require.NoError(t, err)
	s, err = b.e.Summary(b.ctx, 0)
	require.NoError(t, err)
	require.Equal(t, map[string]int{engine.WhyResources: 1}, s.Waiting)
	d, err := b.e.GetMission(b.ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, engine.WhyResources, d.WhyNotRunning[0].Code)
	d, err = b.e.GetMission(b.ctx, c.ID)
	require.NoError(t, err)
	require.Equal(t, engine.WhyQueued, d.WhyNotRunning[0].Code, "not held, a loop leads: the next planning step decides")

	b.acquire(a.ID, true)
	s, err = b.e.Summary(b.ctx, 0)
	require.NoError(t, err)
	require.Empty(t, s.Waiting, "a running mission is not counted as waiting")
	ch, err = b.e.RecordHolds(b.ctx, nil)
	require.NoError(t, err)
	require.Len(t, ch, 1)
	require.Equal(t, engine.Reason{}, ch[0].To)
}

// EscalateOnce keeps its de-duplication in the database: a second call (another leader, a
// restart) finds the open escalation and raises nothing.
func TestEscalateOnce_DeduplicatesInTheDatabase(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}})
	spec := engine.EscalationSpec{MissionIDs: []string{m.ID}, Kind: engine.KindNoAgent, Reason: "nobody offers gpu", DecisionRequired: "configure one"}
	e1, raised, err := b.e.EscalateOnce(b.ctx, spec, "scheduler")
	require.NoError(t, err)
	require.True(t, raised)
	e2, raised, err := engine.New(b.st, engine.Options{Clock: b.clock, DefaultRepository: "/repo"}).EscalateOnce(b.ctx, spec, "scheduler")
	require.NoError(t, err)
	require.False(t, raised)
	require.Equal(t, e1.ID, e2.ID)
	_, _, err = b.e.EscalateOnce(b.ctx, engine.EscalationSpec{MissionIDs: []string{m.ID, m.ID}, Reason: "x", DecisionRequired: "y"}, "t")
	require.Error(t, err)

	// A restarted leader (a new store on the same file) finds it too; another kind of cause
	// about the same mission is its own escalation.
	st, err := teststore.Open(b.ctx, b.path)
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	restarted := engine.New(st, engine.Options{Clock: b.clock, DefaultRepository: "/repo"})
	e3, raised, err := restarted.EscalateOnce(b.ctx, spec, "scheduler")
	require.NoError(t, err)
	require.False(t, raised, "a restarted leader raised it again")
	require.Equal(t, e1.ID, e3.ID)
	checkout := engine.EscalationSpec{MissionIDs: []string{m.ID}, Kind: "checkout", Route: domain.RoutePerson, Reason: "local changes", DecisionRequired: "commit them"}
	e4, raised, err := restarted.EscalateOnce(b.ctx, checkout, "scheduler")
	require.NoError(t, err)
	require.True(t, raised)
	require.NotEqual(t, e1.ID, e4.ID)
	open, err := b.e.Escalations(b.ctx, engine.EscalationFilter{State: domain.EscalationOpen, MissionID: m.ID})
	require.NoError(t, err)
	require.Len(t, open, 2)

	// Once resolved, the same cause raises a new one.
	_, err = b.e.ResolveEscalation(b.ctx, e1.ID, engine.ResolveAcknowledge, "seen", "person")
	require.NoError(t, err)
	e5, raised, err := restarted.EscalateOnce(b.ctx, spec, "scheduler")
	require.NoError(t, err)
	require.True(t, raised, "a resolved escalation frees its key")
	require.NotEqual(t, e1.ID, e5.ID)
}

// A dependent of a mission whose landing is held says what the landing waits for and who can
// move it (approval here), not only its state.
func TestWhyNotRunning_HeldLandingOfAHardDependency(t *testing.T) {
	t.Parallel()
	b := setup(t)
	up := b.create(engine.MissionSpec{WriteArea: []string{"u/**"}})
	down := b.create(engine.MissionSpec{WriteArea: []string{"d/**"}, DependsOn: []string{up.ID}})
	m := b.acquire(up.ID, true)
	_, err := b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "ok"})
	require.NoError(t, err)
	_, err = b.e.AwaitApproval(b.ctx, up.ID, "landing policy approval")
	require.NoError(t, err)
	d, err := b.e.GetMission(b.ctx, down.ID)
	require.NoError(t, err)
	require.Equal(t, engine.WhyHardDep, d.WhyNotRunning[0].Code)
	require.Contains(t, d.WhyNotRunning[0].Message, "approve_landing "+up.ID)
}

// A landing conflicted because its checks failed says so, naming the check, to itself and
// to its dependents — not that it conflicts — and the hold it had while queued (target busy)
// no longer speaks for it.
func TestWhyNotRunning_LandingWhoseChecksFailed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	up := b.create(engine.MissionSpec{WriteArea: []string{"u/**"}})
	down := b.create(engine.MissionSpec{WriteArea: []string{"d/**"}, DependsOn: []string{up.ID}})
	m := b.acquire(up.ID, true)
	_, err := b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "ok"})
	require.NoError(t, err)
	_, err = b.e.RecordHolds(b.ctx, []engine.Hold{{MissionID: up.ID, Reason: engine.Reason{Code: domain.LandWaitTargetBusy, Message: "another landing is in flight"}}})
	require.NoError(t, err)
	_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: up.ID, Attempt: m.Attempt, Status: domain.LandingRecordChecksFailed,
		Detail: domain.CheckFailedLine("go vet ./...", "failed: exit status 1") + "\nvet: x.go:3: unreachable code"}, domain.LandingConflicted)
	require.NoError(t, err)
	check := "the repository's checks failed on the merged tree (`go vet ./...`), after repair missions: a decision is needed"
	d, err := b.e.GetMission(b.ctx, up.ID)
	require.NoError(t, err)
	require.Len(t, d.WhyNotRunning, 1)
	require.Equal(t, domain.LandWaitConflicted, d.WhyNotRunning[0].Code)
	require.Contains(t, d.WhyNotRunning[0].Message, check)
	d, err = b.e.GetMission(b.ctx, down.ID)
	require.NoError(t, err)
	require.Equal(t, engine.WhyHardDep, d.WhyNotRunning[0].Code)
	require.Contains(t, d.WhyNotRunning[0].Message, check)
	require.NotContains(t, d.WhyNotRunning[0].Message, "conflicts with the target")
}

// Two leaders' processes (two stores on one file) raising the same cause at once raise one
// escalation between them.
func TestEscalateOnce_ConcurrentLeadersRaiseOne(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}})
	st, err := teststore.Open(b.ctx, b.path)
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	engines := []*engine.Engine{b.e, engine.New(st, engine.Options{Clock: b.clock, DefaultRepository: "/repo"})}
	spec := engine.EscalationSpec{MissionIDs: []string{m.ID}, Kind: "checkout", Route: domain.RoutePerson, Reason: "local changes", DecisionRequired: "commit them"}
	var wg sync.WaitGroup
	raised := make(chan bool, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, r, err := engines[i%2].EscalateOnce(b.ctx, spec, "scheduler")
			assert.NoError(t, err)
			raised <- r
		}()
	}
	wg.Wait()
	close(raised)
	n := 0
	for r := range raised {
		if r {
			n++
		}
	}
	require.Equal(t, 1, n)
	open, err := b.e.Escalations(b.ctx, engine.EscalationFilter{State: domain.EscalationOpen, MissionID: m.ID})
	require.NoError(t, err)
	require.Len(t, open, 1)
}
