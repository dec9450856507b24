package engine_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// pullEngine is an engine on the wall clock with a short lease, and a reaper running as
// the scheduler's would, for the claim tests that need real time to pass.
func pullEngine(t *testing.T, ttl time.Duration) *bundle {
	t.Helper()
	b := setup(t, func(o *engine.Options) {
		o.Clock, o.LeaseTTL, o.RenewInterval = engine.SystemClock{}, ttl, ttl/10
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			_, _ = b.e.ReapExpired(ctx, nil)
			select {
			case <-ctx.Done():
			case <-time.After(ttl / 20): // the reaper's period, as the scheduler's tick would be
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return b
}

// begin starts a claim for agentID and reads its mission, failing the test otherwise.
func (b *bundle) begin(ctx context.Context, agentID string) (*engine.PendingClaim, domain.Mission) {
	b.t.Helper()
	p, err := b.e.BeginClaim(ctx, engine.ClaimRequest{AgentID: agentID})
	require.NoError(b.t, err)
	m, err := p.Mission(ctx)
	require.NoError(b.t, err)
	return p, m
}

// A workspace that takes longer to prepare than the lease lives costs nothing: the engine
// keeps the lease renewed meanwhile, and the caller's lease runs from the hand-over.
func TestClaim_PreparationLongerThanTheLease(t *testing.T) {
	t.Parallel()
	const ttl = 1500 * time.Millisecond
	b := pullEngine(t, ttl)
	m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}, RetryBudget: budget(0)})
	start := time.Now()
	p, got := b.begin(b.ctx, "slow-host")
	require.Equal(t, m.ID, got.ID)
	require.Equal(t, []string{"a/**"}, got.WriteArea, "Mission is the whole mission, to make the workspace from")
	time.Sleep(2 * ttl) // the workspace is being made: wall time outlasts the lease (the scenario)
	c, err := p.HandOver(b.ctx, engine.Workspace{Path: "/ws/" + m.ID, Strategy: "worktree"}, nil)
	require.NoError(t, err)
	ready := time.Now()
	require.Equal(t, m.ID, c.Mission.ID)
	require.Equal(t, 1, c.Mission.Attempt, "the lease never lapsed: no second attempt")
	require.False(t, c.Mission.Lease.ExpiresAt.Before(start.Add(2*ttl).Add(ttl).Truncate(time.Millisecond)),
		"the caller's lease runs from the hand-over, not from the acquire")
	require.False(t, c.Mission.Lease.ExpiresAt.After(ready.Add(ttl)))
	now := b.get(m.ID)
	require.Equal(t, domain.StateRunning, now.State)
	require.Zero(t, now.AttemptsUsed)
	require.False(t, now.Contacted, "the server's renewals while preparing are not contact")
	require.Equal(t, "/ws/"+m.ID, c.Workspace.Path)
	require.JSONEq(t, `{"mode":"pull","agent":"slow-host"}`, string(c.Mission.Run), "the default run record")
	require.Equal(t, int(ttl/3/time.Second), c.HeartbeatSeconds)
}

// A mission cancelled while its claim is pending is not handed over, whether a renewal or the
// hand-over itself notices; nobody is told about an epoch it never presented, and the
// mission is not failed by the claim (a failed preparation reports the loss, not its own
// error). The scheduler's pull service then moves on to the next mission
// (engine/scheduler/claim_test.go).
func TestClaim_MissionCancelledWhilePendingIsNotHandedOver(t *testing.T) {
	t.Parallel()
	const ttl = 3 * time.Second
	b := pullEngine(t, ttl)
	lost := func(err error, id string) {
		t.Helper()
		var l *engine.ClaimLostError
		require.ErrorAs(t, err, &l)
		require.ErrorIs(t, err, domain.ErrNoWork)
		require.Equal(t, id, l.MissionID)
		require.Contains(t, err.Error(), "was cancelled while its workspace was being prepared")
		require.NotContains(t, err.Error(), "you presented")
		f := b.get(id)
		require.Equal(t, domain.StateCancelled, f.State)
		require.Nil(t, f.LastFailure, "the cancelled mission was not failed by the claim")
	}
	cancel := func(id string) {
		_, err := b.e.Cancel(context.Background(), id, "not needed", false, "person")
		require.NoError(t, err)
	}

	// The claim's renewing goroutine is told from the other claim tests' (they run in
	// parallel) by the goroutine that started it, this test's.
	createdHere := "in goroutine " + goroutineID() + "\n"
	renewing := func() int { return testenv.GoroutinesIn("engine.(*PendingClaim).renew(", createdHere) }
	first := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}})
	p, _ := b.begin(b.ctx, "w")
	testenv.WaitFor(t, "the claim's renewals to run", func() bool { return renewing() == 1 })
	cancel(first.ID)
	testenv.WaitFor(t, "a renewal to notice the cancel (its goroutine returns)", func() bool { return renewing() == 0 })
	_, err := p.HandOver(b.ctx, engine.Workspace{Path: "/ws", Strategy: "worktree"}, nil)
	lost(err, first.ID)

	second := b.create(engine.MissionSpec{WriteArea: []string{"b/**"}})
	p, _ = b.begin(b.ctx, "w")
	cancel(second.ID)
	_, err = p.HandOver(b.ctx, engine.Workspace{Path: "/ws", Strategy: "worktree"}, nil) // the hand-over notices
	lost(err, second.ID)

	third := b.create(engine.MissionSpec{WriteArea: []string{"c/**"}})
	p, _ = b.begin(b.ctx, "w")
	cancel(third.ID)
	lost(p.Fail(b.ctx, errors.New("git worktree add: interrupted")), third.ID)
}

// A claim whose request ends while the workspace is prepared abandons the attempt (no
// budget) instead of leaving it leased to nobody or failing it, whether the preparation
// then fails or succeeds.
func TestClaim_CallerGoneWhilePreparingAbandons(t *testing.T) {
	t.Parallel()
	// A lease that cannot run out during the test: with a 1 s one, a loaded machine took
	// longer than that between the acquire and the abandon, the reaper expired the attempt
	// first (as it should), and there was no abandon to check.
	b := pullEngine(t, time.Minute)
	for i, end := range []func(context.Context, *engine.PendingClaim) error{
		func(ctx context.Context, p *engine.PendingClaim) error { return p.Fail(ctx, ctx.Err()) },
		func(ctx context.Context, p *engine.PendingClaim) error {
			_, err := p.HandOver(ctx, engine.Workspace{Path: "/ws", Strategy: "worktree"}, nil)
			return err
		},
	} {
		m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}, RetryBudget: budget(0)})
		ctx, cancel := context.WithCancel(context.Background())
		p, _ := b.begin(ctx, "gone")
		cancel()
		require.ErrorIs(t, end(ctx, p), context.Canceled, "ending %d", i)
		d, err := b.e.GetMission(b.ctx, m.ID)
		require.NoError(t, err)
		require.Equal(t, domain.StatePending, d.Mission.State)
		require.Zero(t, d.Mission.AttemptsUsed)
		require.Equal(t, 1, d.Mission.Abandons)
		require.Len(t, d.Attempts, 1)
		require.Equal(t, domain.OutcomeAbandoned, d.Attempts[0].Outcome)
		require.Contains(t, d.Attempts[0].Summary, "ended before its result was ready")
		require.Empty(t, d.Workspaces, "nothing was recorded for the caller that went away")
		_, err = b.e.Cancel(b.ctx, m.ID, "next case", false, "test")
		require.NoError(t, err)
	}
}

// A workspace that cannot be made fails the attempt within its budget, and the error names
// the mission, the cause and the decision.
func TestClaim_WorkspaceFailureSaysWhat(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}, RetryBudget: budget(2)})
	p, _ := b.begin(b.ctx, "w")
	err := p.Fail(b.ctx, errors.New("git worktree add: disk full"))
	var ce *engine.ClaimError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, m.ID, ce.MissionID)
	for _, want := range []string{m.ID, "could not be prepared", "disk full", "decision retry", "call claim_mission again"} {
		require.Contains(t, err.Error(), want)
	}
	require.NotContains(t, err.Error(), "presented")
	got := b.get(m.ID)
	require.Equal(t, domain.StatePending, got.State)
	require.Equal(t, 1, got.AttemptsUsed)
	require.Equal(t, domain.FailureWorkspace, got.LastFailure.Kind)
}

// A claim ends once: a second hand-over or failure is refused and changes nothing; waiting
// for work obeys its bounds; a bad request is refused naming the field.
func TestClaim_EndsOnceAndWaitsWithinItsBounds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}})
	p, _ := b.begin(b.ctx, "w")
	c, err := p.HandOver(b.ctx, engine.Workspace{}, nil)
	require.NoError(t, err)
	require.Equal(t, m.ID, c.Mission.ID)
	_, err = p.HandOver(b.ctx, engine.Workspace{}, nil)
	require.ErrorContains(t, err, "already handed over or failed")
	require.ErrorContains(t, p.Fail(b.ctx, errors.New("late")), "already handed over or failed")
	got := b.get(m.ID)
	require.Equal(t, domain.StateRunning, got.State, "the second end changed nothing")
	require.Zero(t, got.AttemptsUsed)
	d, err := b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.Empty(t, d.Workspaces, "a hand-over without a workspace records none")

	_, err = b.e.BeginClaim(b.ctx, engine.ClaimRequest{AgentID: "w"})
	require.ErrorIs(t, err, domain.ErrNoWork)
	start := time.Now()
	_, err = b.e.BeginClaim(b.ctx, engine.ClaimRequest{AgentID: "w", Wait: 200 * time.Millisecond})
	require.ErrorIs(t, err, domain.ErrNoWork)
	require.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "it waited before saying so")
	for _, w := range []time.Duration{-time.Second, engine.MaxClaimWait + time.Second} {
		_, err = b.e.BeginClaim(b.ctx, engine.ClaimRequest{AgentID: "w", Wait: w})
		require.ErrorContains(t, err, "wait_seconds")
	}
	_, err = b.e.BeginClaim(b.ctx, engine.ClaimRequest{})
	require.ErrorContains(t, err, "agent_id")
}

// goroutineID is the id of the calling goroutine, as stack traces print it ("goroutine 7
// [running]"; a goroutine it starts is "created by … in goroutine 7").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}
