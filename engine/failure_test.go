package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

func (b *bundle) failRunning(id string, f domain.Failure) domain.Mission {
	b.t.Helper()
	m := b.acquire(id, true)
	out, err := b.e.Fail(b.ctx, m.Fence(), engine.FailRequest{Failure: f})
	require.NoError(b.t, err)
	return out
}

// The budget is weighted: an identical signature to the previous attempt counts double;
// past the budget the mission fails. Backoff delays the retry.
func TestRetry_WeightedBudgetAndBackoff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "flaky", RetryBudget: budget(3), WriteArea: []string{"f/**"}})
	f1 := domain.Failure{Kind: "test", Tool: "go test", Diagnostic: "TestX failed at line 12", Location: "x_test.go:12"}
	out := b.failRunning(m.ID, f1)
	require.Equal(t, domain.StatePending, out.State)
	require.Equal(t, domain.DecisionRetry, out.Decision.Kind)
	require.Equal(t, 1, out.AttemptsUsed)
	require.True(t, out.NotBefore.After(b.clock.Now()))
	_, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "a", MissionID: m.ID})
	require.ErrorIs(t, err, domain.ErrNoWork, "in backoff")
	why, err := b.e.Explain(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, engine.WhyBackoff, why[0].Code)

	b.clock.Advance(2 * time.Minute)
	// Same fault, different line number: the same signature, so it counts double.
	f2 := f1
	f2.Diagnostic, f2.Location = "TestX failed at line 14", "x_test.go:14"
	require.Equal(t, engine.Signature(f1), engine.Signature(f2))
	out = b.failRunning(m.ID, f2)
	require.Equal(t, 3, out.AttemptsUsed)
	require.Equal(t, domain.StatePending, out.State)

	b.clock.Advance(2 * time.Minute)
	out = b.failRunning(m.ID, domain.Failure{Kind: "build", Summary: "something else"})
	require.Equal(t, domain.StateFailed, out.State)
	require.Equal(t, domain.DecisionFail, out.Decision.Kind)
	require.LessOrEqual(t, out.AttemptsUsed-2, out.RetryBudget, "retries granted never exceed the budget")
	require.Equal(t, "retry budget spent: this failure brings the retries used to 4, over the budget of 3", out.Decision.Reason, "a new failure counted once says nothing of doubling")
	b.verifyReplay()

	// The same failure as the last one past the budget: its reason says it counted double
	// (found by issue 15's fresh-user trial, where a first failure with retry budget 0 said
	// "identical failures count double").
	m = b.create(engine.MissionSpec{Title: "flaky twice", RetryBudget: budget(1), WriteArea: []string{"g/**"}})
	require.Equal(t, domain.StatePending, b.failRunning(m.ID, f1).State)
	b.clock.Advance(2 * time.Minute)
	out = b.failRunning(m.ID, f2)
	require.Equal(t, domain.StateFailed, out.State)
	require.Equal(t, "retry budget spent: this failure brings the retries used to 3, over the budget of 1 (it repeated the previous failure, so it counted double)", out.Decision.Reason)
}

// Environment failures block with an escalation instead of burning retries.
func TestRetry_EnvironmentKindBlocks(t *testing.T) {
	t.Parallel()
	for kind, route := range map[string]domain.Route{"auth": domain.RouteMainAgent, "missing_toolchain": domain.RouteMainAgent,
		"quota": domain.RouteMainAgent, "permission": domain.RoutePerson} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			m := b.create(engine.MissionSpec{Title: "needs creds", WriteArea: []string{"c/**"}})
			out := b.failRunning(m.ID, domain.Failure{Kind: kind, Summary: "401 Invalid API key"})
			require.Equal(t, domain.StateBlocked, out.State)
			require.Equal(t, 0, out.AttemptsUsed, "no budget spent")
			d, err := b.e.GetMission(b.ctx, m.ID)
			require.NoError(t, err)
			require.NotNil(t, d.Escalation)
			require.Equal(t, route, d.Escalation.Route)
			require.Equal(t, "environment", d.Escalation.Kind)
			// Resolving with retry puts it back.
			_, err = b.e.ResolveEscalation(b.ctx, d.Escalation.ID, engine.ResolveRetry, "key fixed", "person")
			require.NoError(t, err)
			require.Equal(t, domain.StatePending, b.get(m.ID).State)
			b.verifyReplay()
		})
	}
}

// A permission failure's summary ends with the profile setting that would allow the refused
// calls; the escalation's reason (and so the escalation.opened notification) carries it whole
// even when the calls named before it are long (found by issue 15's fresh-user trial: the
// reason was cut at 300 bytes, in the middle of a 230-character command).
func TestRetry_PermissionEscalationKeepsTheSettingAtTheEnd(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "deploy", WriteArea: []string{"d/**"}})
	summary := "profile claude: claude-code was refused 2 tool call(s) under permission mode acceptEdits: Bash: " +
		strings.Repeat("x", 100) + "…, Bash: " + strings.Repeat("y", 100) + "…; to allow them, add \"Bash\" to the profile's " +
		"allowed_tools (Claude Code --allowedTools) or choose a permission_mode that permits them"
	out := b.failRunning(m.ID, domain.Failure{Kind: "permission", Tool: "Bash", Summary: summary})
	require.Equal(t, domain.StateBlocked, out.State)
	d, err := b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.NotNil(t, d.Escalation)
	require.Equal(t, "permission failure: the environment cannot do this, retrying would not help: permission "+summary, d.Escalation.Reason)
}

// A repeated failure while other work ran beside it becomes retry_serial: the next attempt
// runs alone in the repository.
func TestRetry_SerialAfterRepeatedParallelFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "racy", WriteArea: []string{"r/**"}, RetryBudget: budget(5)})
	f := domain.Failure{Kind: "test", Summary: "port already in use"}
	for i := 0; i < 2; i++ {
		run := b.acquire(m.ID, true)
		out, err := b.e.Fail(b.ctx, run.Fence(), engine.FailRequest{Failure: f, ParallelInRepo: true})
		require.NoError(t, err)
		b.clock.Advance(time.Minute)
		if i == 1 {
			require.Equal(t, domain.DecisionRetrySerial, out.Decision.Kind)
			require.True(t, out.Serial)
		}
	}
	other := b.create(engine.MissionSpec{Title: "other", WriteArea: []string{"o/**"}})
	b.acquire(other.ID, true)
	_, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "a", MissionID: m.ID})
	require.ErrorIs(t, err, domain.ErrNoWork, "serial: waits until the repository is free")
}

// With a debugger persona available, a repeated identical failure creates a debugger mission
// that the failing mission waits for.
func TestRetry_DebugMission(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *engine.Options) { o.DebugAvailable = func() bool { return true } })
	m := b.create(engine.MissionSpec{Title: "stubborn", WriteArea: []string{"s/**"}, RetryBudget: budget(5)})
	f := domain.Failure{Kind: "test", Summary: "nil pointer"}
	b.failRunning(m.ID, f)
	b.clock.Advance(time.Minute)
	out := b.failRunning(m.ID, f)
	require.Equal(t, domain.DecisionDebug, out.Decision.Kind)
	kids, err := b.e.ListMissions(b.ctx, engine.MissionFilter{SubjectID: m.ID})
	require.NoError(t, err)
	require.Len(t, kids, 1)
	require.Equal(t, domain.KindDebug, kids[0].Kind)
	require.Equal(t, "debugger", kids[0].Persona)
	b.clock.Advance(time.Hour)
	why, err := b.e.Explain(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, engine.WhyHardDep, why[0].Code)
	require.Equal(t, kids[0].ID, why[0].MissionID)
}

// shared/cases B14: when an upstream fails for good, its dependents (transitively) are
// blocked naming it; retrying it reopens them. Cycles and unknown ids are rejected.
func TestB14_UpstreamFailureBlocksDependentsAndRetryReopens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "chain", Missions: []engine.MissionSpec{
		{Key: "A", Title: "A", WriteArea: []string{"a/**"}, RetryBudget: budget(0)},
		{Key: "B", Title: "B", WriteArea: []string{"b/**"}, DependsOn: []string{"A"}},
		{Key: "C", Title: "C", WriteArea: []string{"c/**"}, DependsOn: []string{"B"}},
	}}, "t")
	require.NoError(t, err)
	b.failRunning(d.IDs["A"], domain.Failure{Kind: "build", Summary: "does not compile"})
	for _, k := range []string{"B", "C"} {
		det, err := b.e.GetMission(b.ctx, d.IDs[k])
		require.NoError(t, err)
		require.Equal(t, domain.StateBlocked, det.Mission.State, k)
		require.Equal(t, "upstream_failed", det.Escalation.Kind)
		require.Equal(t, d.IDs["A"], det.Escalation.CauseID)
		require.Contains(t, det.Escalation.Reason, d.IDs["A"])
	}
	// The voyage settles as blocked instead of waiting forever.
	s, err := b.e.SettleVoyage(b.ctx, d.Voyage.ID, nil)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageBlocked, s.Voyage.State)
	// voyage_status says why each dependent is blocked (it said "no decision recorded")
	vs, err := b.e.VoyageStatus(b.ctx, d.Voyage.ID)
	require.NoError(t, err)
	for _, l := range vs.Missions {
		if l.Key == "B" || l.Key == "C" {
			require.Len(t, l.Why, 1, l.Key)
			require.Contains(t, l.Why[0].Message, "upstream mission "+d.IDs["A"], l.Key)
		}
	}

	_, err = b.e.Retry(b.ctx, d.IDs["A"], "t")
	require.NoError(t, err)
	for _, k := range []string{"A", "B", "C"} {
		require.Equal(t, domain.StatePending, b.get(d.IDs[k]).State, k)
	}
	v, err := b.e.VoyageStatus(b.ctx, d.Voyage.ID)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageActive, v.Voyage.State)
	require.Empty(t, v.Escalations, "the upstream escalation was resolved by the retry")
	b.verifyReplay()

	// Cycles and unknown ids are rejected at insert, naming them; nothing is stored.
	_, err = b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "cycle", Missions: []engine.MissionSpec{
		{Key: "X", Title: "X", DependsOn: []string{"Y"}}, {Key: "Y", Title: "Y", DependsOn: []string{"X"}}}}, "t")
	var cyc *domain.CycleError
	require.ErrorAs(t, err, &cyc)
	require.Equal(t, []string{"X", "Y", "X"}, cyc.Cycle)
	_, err = b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "unknown", Missions: []engine.MissionSpec{
		{Key: "X", Title: "X", DependsOn: []string{"msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"}}}}, "t")
	require.ErrorIs(t, err, domain.ErrUnknownMission)
	_, err = b.e.CreateMission(b.ctx, engine.MissionSpec{Title: "bad", DependsOn: []string{"../../etc"}}, "t")
	require.ErrorIs(t, err, domain.ErrInvalid)
	all, err := b.e.ListMissions(b.ctx, engine.MissionFilter{})
	require.NoError(t, err)
	require.Len(t, all, 3, "rejected dispatches stored nothing")
}

// A new mission whose hard dependency already failed is blocked at once.
func TestCreate_DependingOnFailedMissionBlocks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	failed := b.inState(domain.StateFailed)
	m := b.create(engine.MissionSpec{Title: "late", DependsOn: []string{failed.ID}})
	require.Equal(t, domain.StateBlocked, b.get(m.ID).State)
}

// Cancelling a mission cancels the debugger mission about it that has not finished: it was
// there only to find why that mission failed. The debugger's decision names the cancelled
// mission.
func TestRetry_CancelledMissionCancelsItsDebugger(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *engine.Options) { o.DebugAvailable = func() bool { return true } })
	m := b.create(engine.MissionSpec{Title: "stubborn", WriteArea: []string{"s/**"}, RetryBudget: budget(5)})
	f := domain.Failure{Kind: "test", Summary: "nil pointer"}
	b.failRunning(m.ID, f)
	b.clock.Advance(time.Minute)
	require.Equal(t, domain.DecisionDebug, b.failRunning(m.ID, f).Decision.Kind)
	kids, err := b.e.ListMissions(b.ctx, engine.MissionFilter{SubjectID: m.ID})
	require.NoError(t, err)
	require.Len(t, kids, 1)
	dbg := kids[0]
	b.acquire(dbg.ID, true) // the debugger is running when its subject is cancelled

	_, err = b.e.Cancel(b.ctx, m.ID, "not needed any more", false, "person")
	require.NoError(t, err)
	got, err := b.e.GetMission(b.ctx, dbg.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StateCancelled, got.Mission.State)
	require.NotNil(t, got.Mission.Decision)
	require.Equal(t, "the mission it debugs, "+m.ID+", was cancelled", got.Mission.Decision.Reason)
	require.Equal(t, domain.OutcomeCancelled, got.Attempts[len(got.Attempts)-1].Outcome)
}

// A voyage blocked by a report of failed missions: resolving the report with retry runs them
// again (fresh retry budget), as `escalations show` promises ("the blocked missions run
// again"). It did nothing for failed missions, and the voyage blocked again at once with the
// same report (found in the t14 cluster trial).
func TestResolveRetryOfAVoyageReportRetriesItsFailedMissions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "two", Missions: []engine.MissionSpec{
		{Key: "A", Title: "A", WriteArea: []string{"a/**"}, RetryBudget: budget(0)},
		{Key: "B", Title: "B", WriteArea: []string{"b/**"}, RetryBudget: budget(0)},
	}}, "t")
	require.NoError(t, err)
	for _, k := range []string{"A", "B"} {
		b.failRunning(d.IDs[k], domain.Failure{Kind: "dispatch", Summary: "remote has no commit"})
	}
	s, err := b.e.SettleVoyage(b.ctx, d.Voyage.ID, nil)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageBlocked, s.Voyage.State)
	report := s.Voyage.EscalationID
	require.NotEmpty(t, report)

	_, err = b.e.ResolveEscalation(b.ctx, report, engine.ResolveRetry, "remote fixed", "person")
	require.NoError(t, err)
	for _, k := range []string{"A", "B"} {
		m := b.get(d.IDs[k])
		require.Equal(t, domain.StatePending, m.State, k)
		require.Zero(t, m.AttemptsUsed, k)
	}
	s, err = b.e.SettleVoyage(b.ctx, d.Voyage.ID, nil)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageActive, s.Voyage.State, "the voyage goes on instead of blocking again")
	b.verifyReplay()
}
