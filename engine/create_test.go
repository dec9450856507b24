package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

func TestCreate_IdempotencyKeyReturnsExisting(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first, err := b.e.CreateMission(b.ctx, engine.MissionSpec{Title: "once", IdempotencyKey: "req-42"}, "t")
	require.NoError(t, err)
	require.True(t, first.Created)
	again, err := b.e.CreateMission(b.ctx, engine.MissionSpec{Title: "once", IdempotencyKey: "req-42"}, "t")
	require.NoError(t, err)
	require.False(t, again.Created)
	require.Equal(t, first.Mission.ID, again.Mission.ID)

	spec := engine.VoyageSpec{Title: "v", IdempotencyKey: "voy-1", Missions: []engine.MissionSpec{{Key: "a", Title: "a"}}}
	d1, err := b.e.Dispatch(b.ctx, spec, "t")
	require.NoError(t, err)
	d2, err := b.e.Dispatch(b.ctx, spec, "t")
	require.NoError(t, err)
	require.False(t, d2.Created)
	require.Equal(t, d1.Voyage.ID, d2.Voyage.ID)
	require.Equal(t, d1.IDs, d2.IDs)
	all, err := b.e.ListMissions(b.ctx, engine.MissionFilter{})
	require.NoError(t, err)
	require.Len(t, all, 2)
}

// Bad input gets an error that names the field and says what to send; nothing is stored.
func TestCreate_ValidationNamesTheField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	long := make([]byte, engine.MaxTitleLen+1)
	for i := range long {
		long[i] = 'x'
	}
	cases := map[string]engine.MissionSpec{
		"title":              {Title: "  "},
		"priority":           {Title: "t", Priority: 5000},
		"persona":            {Title: "t", Persona: "Not A Persona"},
		"write_area[0]":      {Title: "t", WriteArea: []string{"../outside/**"}},
		"retry_budget":       {Title: "t", RetryBudget: budget(-1)},
		"review":             {Title: "t", Review: "maybe"},
		"workspace":          {Title: "t", Workspace: "/tmp/x"},
		"deadline":           {Title: "t", Deadline: t0.Add(-time.Hour)},
		"depends_on[0]":      {Title: "t", DependsOn: []string{"--output=/tmp/pwn"}},
		"capabilities[0]":    {Title: "t", Capabilities: []string{"a b"}},
		"model_policy.model": {Title: "t", ModelPolicy: domain.ModelPolicy{Mode: domain.ModeSchedulerForced}},
		"idempotency_key":    {Title: "t", IdempotencyKey: "../../x"},
	}
	cases["title "] = engine.MissionSpec{Title: string(long)}
	// bug case B32: a target branch git would misread is refused when the mission is created,
	// not when its first attempt starts
	for i, ref := range []string{"--output=/tmp/pwn", "-f", "x..y", "a@{1}", "foo.lock", "HEAD", "has space", "ctl\ax", "refs/heads/main"} {
		cases["target_branch"+strings.Repeat(" ", i+1)] = engine.MissionSpec{Title: "t", TargetBranch: ref}
	}
	for field, spec := range cases {
		_, err := b.e.CreateMission(b.ctx, spec, "t")
		var fe *domain.FieldError
		require.ErrorAs(t, err, &fe, field)
		require.Equal(t, trim(field), fe.Field)
		require.True(t, domain.CallerError(err))
	}
	all, err := b.e.ListMissions(b.ctx, engine.MissionFilter{})
	require.NoError(t, err)
	require.Empty(t, all)
}

func trim(s string) string {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

func TestWriteArea_OverlapRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b string
		want bool
	}{
		{"internal/auth/**", "internal/auth/token.go", true},
		{"internal/auth/**", "internal/db/**", false},
		{"internal/auth", "internal/auth/token.go", true}, // a literal directory covers its files
		{"docs/readme.md", "docs/*.txt", false},           // provably disjoint
		{"docs/readme.md", "docs/*.md", true},
		{"docs/*.md", "docs/*.txt", true}, // same literal prefix: unsure, so they overlap
		{"**/*.go", "cmd/main.go", true},
		{"cmd/**", "pkg/**", false},
		{"a/b", "a/bc", false},
		{"src/{a,b}/**", "src/c/x.go", true}, // alternation: unsure
		{"pkg/x.go", "pkg/x.go", true},
	}
	for _, c := range cases {
		require.Equal(t, c.want, engine.PatternsOverlap(c.a, c.b), "%s ~ %s", c.a, c.b)
		require.Equal(t, c.want, engine.PatternsOverlap(c.b, c.a), "%s ~ %s", c.b, c.a)
	}
}

// Overlapping write areas get a persisted conflict edge (source scheduler) that disappears
// when either mission ends.
func TestWriteArea_ConflictEdgesLiveWhileBothAreOpen(t *testing.T) {
	t.Parallel()
	b := setup(t)
	x := b.create(engine.MissionSpec{Title: "x", WriteArea: []string{"api/**"}})
	y := b.create(engine.MissionSpec{Title: "y", WriteArea: []string{"api/v1/handler.go"}})
	d, err := b.e.GetMission(b.ctx, y.ID)
	require.NoError(t, err)
	require.Len(t, d.DependsOn, 1)
	require.Equal(t, domain.EdgeConflict, d.DependsOn[0].Type)
	require.Equal(t, domain.SourceScheduler, d.DependsOn[0].Source)
	require.Equal(t, x.ID, d.DependsOn[0].DependsOn)
	_, err = b.e.Cancel(b.ctx, x.ID, "not needed", false, "t")
	require.NoError(t, err)
	d, err = b.e.GetMission(b.ctx, y.ID)
	require.NoError(t, err)
	require.Empty(t, d.DependsOn)
	// Reopening x brings the conflict back.
	_, err = b.e.Retry(b.ctx, x.ID, "t")
	require.NoError(t, err)
	d, err = b.e.GetMission(b.ctx, x.ID)
	require.NoError(t, err)
	require.Len(t, d.DependsOn, 1)
}

func TestUpdate_FieldsByState(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := 7
	title := "renamed"
	m := b.inState(domain.StateRunning)
	_, err := b.e.UpdateMission(b.ctx, m.ID, engine.MissionPatch{Priority: &p}, "t")
	require.NoError(t, err)
	_, err = b.e.UpdateMission(b.ctx, m.ID, engine.MissionPatch{Title: &title}, "t")
	var fe *domain.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "title", fe.Field)
	pending := b.inState(domain.StatePending)
	up, err := b.e.UpdateMission(b.ctx, pending.ID, engine.MissionPatch{Title: &title, Priority: &p}, "t")
	require.NoError(t, err)
	require.Equal(t, "renamed", up.Title)
	require.Equal(t, 7, up.Priority)
	done := b.inState(domain.StateCompleted)
	_, err = b.e.UpdateMission(b.ctx, done.ID, engine.MissionPatch{Priority: &p}, "t")
	require.ErrorIs(t, err, domain.ErrInvalid)
	b.verifyReplay()
}

func TestDeadline_MissedRaisesOneEscalation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "due", Deadline: t0.Add(time.Hour)})
	escs, err := b.e.EscalateMissedDeadlines(b.ctx)
	require.NoError(t, err)
	require.Empty(t, escs)
	b.clock.Advance(2 * time.Hour)
	escs, err = b.e.EscalateMissedDeadlines(b.ctx)
	require.NoError(t, err)
	require.Len(t, escs, 1)
	require.Equal(t, "deadline", escs[0].Kind)
	require.Equal(t, []string{m.ID}, escs[0].MissionIDs)
	escs, err = b.e.EscalateMissedDeadlines(b.ctx)
	require.NoError(t, err)
	require.Empty(t, escs, "once per deadline")
}

func TestSettle_CompletedAndDeadlock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "two", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a/**"}}, {Key: "b", Title: "b", WriteArea: []string{"b/**"}, DependsOn: []string{"a"}}}}, "t")
	require.NoError(t, err)
	for _, k := range []string{"a", "b"} {
		m := b.acquire(d.IDs[k], true)
		_, err := b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "ok"})
		require.NoError(t, err)
		s, err := b.e.SettleVoyage(b.ctx, d.Voyage.ID, nil)
		require.NoError(t, err)
		require.Equal(t, domain.VoyageActive, s.Voyage.State, "landing pending is progress")
		_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: m.ID, Attempt: 1, Status: "landed"}, domain.LandingLanded)
		require.NoError(t, err)
	}
	s, err := b.e.SettleVoyage(b.ctx, d.Voyage.ID, nil)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageCompleted, s.Voyage.State)

	// A mission no agent can take: while it waits for an agent to claim it (transient), the
	// voyage waits; once that is a decision (no_agent), the voyage blocks with a no_agent
	// report, not a deadlock.
	d2, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "stuck", Missions: []engine.MissionSpec{
		{Key: "x", Title: "needs a persona nobody has", Persona: "astronaut", WriteArea: []string{"x/**"}}}}, "t")
	require.NoError(t, err)
	waiting := func(m *domain.Mission) *engine.Reason {
		return &engine.Reason{Code: engine.WhyWaitingAgent, Message: "waiting for an agent to claim it"}
	}
	s, err = b.e.SettleVoyage(b.ctx, d2.Voyage.ID, waiting)
	require.NoError(t, err)
	require.NotEqual(t, domain.VoyageBlocked, s.Voyage.State, "waiting for an agent is not a deadlock")
	noAgent := func(m *domain.Mission) *engine.Reason {
		return &engine.Reason{Code: engine.WhyUnavailable, Message: "no agent offers persona " + m.Persona}
	}
	s, err = b.e.SettleVoyage(b.ctx, d2.Voyage.ID, noAgent)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageBlocked, s.Voyage.State)
	require.Contains(t, s.Stuck[d2.IDs["x"]][0].Message, "astronaut")
	escs, err := b.e.Escalations(b.ctx, engine.EscalationFilter{VoyageID: d2.Voyage.ID, State: domain.EscalationOpen})
	require.NoError(t, err)
	require.Len(t, escs, 1)
	require.Equal(t, engine.KindNoAgent, escs[0].Kind)
	require.NotEmpty(t, escs[0].SafeNextStep)

	// A true deadlock: a hard dependency whose work was left unlanded (landing none) can
	// never be satisfied.
	d3, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "dead", Missions: []engine.MissionSpec{
		{Key: "u", Title: "u", WriteArea: []string{"u/**"}}, {Key: "w", Title: "w", WriteArea: []string{"w/**"}, DependsOn: []string{"u"}}}}, "t")
	require.NoError(t, err)
	u := b.acquire(d3.IDs["u"], true)
	_, err = b.e.Complete(b.ctx, u.Fence(), domain.WorkerResult{Summary: "ok"})
	require.NoError(t, err)
	_, err = b.e.LeaveLanding(b.ctx, u.ID, "landing policy none")
	require.NoError(t, err)
	s, err = b.e.SettleVoyage(b.ctx, d3.Voyage.ID, nil)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageBlocked, s.Voyage.State)
	escs, err = b.e.Escalations(b.ctx, engine.EscalationFilter{VoyageID: d3.Voyage.ID, State: domain.EscalationOpen})
	require.NoError(t, err)
	require.Len(t, escs, 1)
	require.Equal(t, "deadlock", escs[0].Kind)
}

// A paused scheduler holds a voyage's missions without blocking the voyage: a pause ends by
// itself (issue 11).
func TestSettle_PauseIsNotADeadlock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "paused", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a/**"}}}}, "t")
	require.NoError(t, err)
	require.NoError(t, b.e.SetPaused(b.ctx, true, "lunch", "t"))
	s, err := b.e.SettleVoyage(b.ctx, d.Voyage.ID, nil)
	require.NoError(t, err)
	require.NotEqual(t, domain.VoyageBlocked, s.Voyage.State)
	escs, err := b.e.Escalations(b.ctx, engine.EscalationFilter{VoyageID: d.Voyage.ID, State: domain.EscalationOpen})
	require.NoError(t, err)
	require.Empty(t, escs)
}

func TestCancel_RunningLosesLeaseAndVoyageCancel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a/**"}}, {Key: "b", Title: "b", WriteArea: []string{"b/**"}}}}, "t")
	require.NoError(t, err)
	run := b.acquire(d.IDs["a"], true)
	v, err := b.e.CancelVoyage(b.ctx, d.Voyage.ID, "changed plans", "t")
	require.NoError(t, err)
	require.Equal(t, domain.VoyageCancelled, v.State)
	_, err = b.e.Heartbeat(b.ctx, run.Fence())
	require.ErrorIs(t, err, domain.ErrLeaseLost)
	for _, id := range d.IDs {
		require.Equal(t, domain.StateCancelled, b.get(id).State)
	}
	b.verifyReplay()
}

func TestPurge_LeavesTombstoneAndReplayAgrees(t *testing.T) {
	t.Parallel()
	b := setup(t)
	live := b.inState(domain.StateRunning)
	require.ErrorIs(t, b.e.Purge(b.ctx, live.ID, "t"), domain.ErrIllegalTransition)
	done := b.inState(domain.StateCompleted)
	require.NoError(t, b.e.Purge(b.ctx, done.ID, "t"))
	_, err := b.e.GetMission(b.ctx, done.ID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	evs, err := b.e.Events(b.ctx, engine.EventFilter{MissionID: done.ID})
	require.NoError(t, err)
	require.Equal(t, "mission.purged", evs[len(evs)-1].Type)
	b.verifyReplay()
}

// A completed mission whose landing a repair mission carries does not keep its voyage active
// by itself: the repair mission decides. When the repair's own landing needs a decision the
// voyage blocks (it stayed active for ever before); when every repair was cancelled the
// subject itself is stuck.
func TestSettle_RepairLandingFollowsItsRepairMission(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{{Key: "a", Title: "a", WriteArea: []string{"a/**"}}}}, "t")
	require.NoError(t, err)
	a := b.acquire(d.IDs["a"], true)
	_, err = b.e.Complete(b.ctx, a.Fence(), domain.WorkerResult{Summary: "ok"})
	require.NoError(t, err)
	complete := func(spec engine.MissionSpec) domain.Mission {
		spec.Kind, spec.VoyageID, spec.WriteArea = domain.KindRepair, d.Voyage.ID, []string{"a/**"}
		r := b.create(spec)
		_, err := b.e.RecordLanding(b.ctx, domain.Landing{MissionID: spec.SubjectID, Attempt: 1, Status: "checks_failed"}, domain.LandingRepair)
		require.NoError(t, err)
		return r
	}
	r := complete(engine.MissionSpec{Title: "repair a", SubjectID: a.ID})
	s, err := b.e.SettleVoyage(b.ctx, d.Voyage.ID, nil)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageActive, s.Voyage.State, "the repair mission can run")

	r = b.acquire(r.ID, true)
	_, err = b.e.Complete(b.ctx, r.Fence(), domain.WorkerResult{Summary: "did nothing"})
	require.NoError(t, err)
	_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: r.ID, Attempt: 1, Status: "checks_failed"}, domain.LandingConflicted)
	require.NoError(t, err)
	s, err = b.e.SettleVoyage(b.ctx, d.Voyage.ID, nil)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageBlocked, s.Voyage.State)
	require.Contains(t, s.Stuck, r.ID)
	require.NotContains(t, s.Stuck, a.ID, "the subject waits for its repair, which is what is stuck")

	// A second subject whose only repair was cancelled is stuck itself.
	d2, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "w", Missions: []engine.MissionSpec{{Key: "c", Title: "c", WriteArea: []string{"c/**"}}}}, "t")
	require.NoError(t, err)
	c := b.acquire(d2.IDs["c"], true)
	_, err = b.e.Complete(b.ctx, c.Fence(), domain.WorkerResult{Summary: "ok"})
	require.NoError(t, err)
	rc := b.create(engine.MissionSpec{Title: "repair c", Kind: domain.KindRepair, SubjectID: c.ID, VoyageID: d2.Voyage.ID, WriteArea: []string{"c/**"}})
	_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: c.ID, Attempt: 1, Status: "conflicted"}, domain.LandingRepair)
	require.NoError(t, err)
	_, err = b.e.Cancel(b.ctx, rc.ID, "not this way", false, "t")
	require.NoError(t, err)
	s, err = b.e.SettleVoyage(b.ctx, d2.Voyage.ID, nil)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageBlocked, s.Voyage.State)
	require.Contains(t, s.Stuck[c.ID][0].Message, "cancelled")
}

// Found by a new-user trial under load: between a repair mission's landing and the write that
// marks the work it carries landed, nothing moves and nothing is stuck; the voyage blocked
// with a "deadlock" report of 0 stuck missions that stayed open after it completed. That
// moment is progress, and a voyage that completes closes its report.
func TestSettle_RepairLandedIsProgressAndCompletionClosesTheReport(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{{Key: "a", Title: "a", WriteArea: []string{"a/**"}}}}, "t")
	require.NoError(t, err)
	a := b.acquire(d.IDs["a"], true)
	_, err = b.e.Complete(b.ctx, a.Fence(), domain.WorkerResult{Summary: "ok"})
	require.NoError(t, err)
	r := b.create(engine.MissionSpec{Title: "repair a", Kind: domain.KindRepair, SubjectID: a.ID, VoyageID: d.Voyage.ID, WriteArea: []string{"a/**"}})
	_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: a.ID, Attempt: 1, Status: "conflicted"}, domain.LandingRepair)
	require.NoError(t, err)
	r = b.acquire(r.ID, true)
	_, err = b.e.Complete(b.ctx, r.Fence(), domain.WorkerResult{Summary: "merged"})
	require.NoError(t, err)
	_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: r.ID, Attempt: 1, Status: "landed"}, domain.LandingLanded)
	require.NoError(t, err)

	s, err := b.e.SettleVoyage(b.ctx, d.Voyage.ID, nil)
	require.NoError(t, err)
	require.NotEqual(t, domain.VoyageBlocked, s.Voyage.State, "the carried landing is a write away")
	escs, err := b.e.Escalations(b.ctx, engine.EscalationFilter{VoyageID: d.Voyage.ID, State: domain.EscalationOpen})
	require.NoError(t, err)
	require.Empty(t, escs, "no deadlock report with nothing stuck")

	// a voyage blocked for a real reason that then completes closes its report
	d2, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "w", Missions: []engine.MissionSpec{{Key: "c", Title: "c", WriteArea: []string{"c/**"}}}}, "t")
	require.NoError(t, err)
	c := b.acquire(d2.IDs["c"], true)
	_, err = b.e.Complete(b.ctx, c.Fence(), domain.WorkerResult{Summary: "ok"})
	require.NoError(t, err)
	_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: c.ID, Attempt: 1, Status: "conflicted"}, domain.LandingConflicted)
	require.NoError(t, err)
	s, err = b.e.SettleVoyage(b.ctx, d2.Voyage.ID, nil)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageBlocked, s.Voyage.State)
	// the decision: a repair mission carries the work, and its landing lands it
	rc := b.create(engine.MissionSpec{Title: "repair c", Kind: domain.KindRepair, SubjectID: c.ID, VoyageID: d2.Voyage.ID, WriteArea: []string{"c/**"}})
	rc = b.acquire(rc.ID, true)
	_, err = b.e.Complete(b.ctx, rc.Fence(), domain.WorkerResult{Summary: "merged by hand"})
	require.NoError(t, err)
	_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: rc.ID, Attempt: 1, Status: "landed"}, domain.LandingLanded)
	require.NoError(t, err)
	_, err = b.e.CarryLanding(b.ctx, c.ID, rc.ID)
	require.NoError(t, err)
	s, err = b.e.SettleVoyage(b.ctx, d2.Voyage.ID, nil)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageCompleted, s.Voyage.State)
	escs, err = b.e.Escalations(b.ctx, engine.EscalationFilter{VoyageID: d2.Voyage.ID, State: domain.EscalationOpen})
	require.NoError(t, err)
	require.Empty(t, escs, "the completed voyage's blocker report is closed")
}
