package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// expireAndReap moves the clock past the lease and reaps; it returns the ids reaped.
func (b *bundle) expireAndReap() []string {
	b.t.Helper()
	b.clock.Advance(b.e.LeaseTTL() + time.Second)
	reaped, err := b.e.ReapExpired(b.ctx, nil)
	require.NoError(b.t, err)
	return reaped
}

// A lease that runs out before its agent was ever heard from is abandoned: no budget, no
// backoff, no signature; the third in a row blocks the mission with an "abandoned"
// escalation naming the attempts; a retry starts the count again.
func TestAbandon_ExpiryWithoutContactCostsNoBudgetAndBlocksAtTheLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}, RetryBudget: budget(1)})
	for i := 1; i <= engine.DefaultAbandonLimit; i++ {
		got, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: fmt.Sprintf("ghost-%d", i), MissionID: m.ID, Start: true})
		require.NoError(t, err, "attempt %d: an abandoned mission is runnable at once (no backoff)", i)
		require.False(t, got.Contacted)
		// A renewal by the server on the agent's behalf is not contact.
		_, err = b.e.RenewLease(b.ctx, got.Fence())
		require.NoError(t, err)
		require.Equal(t, []string{m.ID}, b.expireAndReap())
		now := b.get(m.ID)
		require.Equal(t, i, now.Abandons)
		require.Zero(t, now.AttemptsUsed, "an abandon spends no retry budget")
		require.Empty(t, now.LastSignature)
		if i < engine.DefaultAbandonLimit {
			require.Equal(t, domain.StatePending, now.State)
		}
	}
	d, err := b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StateBlocked, d.Mission.State)
	require.NotNil(t, d.Escalation)
	require.Equal(t, engine.EscalationAbandoned, d.Escalation.Kind)
	require.Contains(t, d.Escalation.Reason, "agents claim this mission and vanish")
	require.Len(t, d.Escalation.Evidence, engine.DefaultAbandonLimit)
	require.Contains(t, d.Escalation.Evidence[2], "ghost-3")
	require.Len(t, d.Attempts, engine.DefaultAbandonLimit)
	for _, a := range d.Attempts {
		require.Equal(t, domain.OutcomeAbandoned, a.Outcome)
		require.Nil(t, a.Failure)
	}
	_, err = b.e.Retry(b.ctx, m.ID, "test")
	require.NoError(t, err)
	require.Zero(t, b.get(m.ID).Abandons, "a retry starts the count again")
	b.verifyReplay()
}

// One heartbeat makes an expiry a crash again (budget, backoff), and any attempt that ends
// otherwise breaks the row of abandons.
func TestAbandon_ContactMakesItACrashAndBreaksTheRow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}, RetryBudget: budget(3)})
	got := b.acquire(m.ID, true)
	require.Equal(t, []string{m.ID}, b.expireAndReap())
	require.Equal(t, 1, b.get(m.ID).Abandons)

	got = b.acquire(m.ID, true)
	_, err := b.e.Heartbeat(b.ctx, got.Fence())
	require.NoError(t, err)
	require.True(t, b.get(m.ID).Contacted)
	require.Equal(t, []string{m.ID}, b.expireAndReap())
	now := b.get(m.ID)
	require.Equal(t, domain.StatePending, now.State)
	require.Equal(t, 1, now.AttemptsUsed, "an agent that was heard from and vanished crashed")
	require.Zero(t, now.Abandons, "a crash breaks the row of abandons")
	require.True(t, now.NotBefore.After(b.clock.Now()), "a crash backs off")

	b.clock.Advance(time.Hour)
	got = b.acquire(m.ID, true)
	require.False(t, got.Contacted, "every acquire starts without contact")
	require.NoError(t, b.e.Progress(b.ctx, got.Fence(), nil, "working"))
	require.True(t, b.get(m.ID).Contacted, "progress is contact")
	b.verifyReplay()
}

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
			case <-time.After(ttl / 20):
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return b
}

func slowPreparer(d time.Duration) engine.WorkspacePreparer {
	return func(ctx context.Context, m *domain.Mission) (engine.Workspace, json.RawMessage, error) {
		select {
		case <-time.After(d):
			return engine.Workspace{Path: "/ws/" + m.ID, Strategy: "worktree"}, nil, nil
		case <-ctx.Done():
			return engine.Workspace{}, nil, ctx.Err()
		}
	}
}

// A workspace that takes longer to prepare than the lease lives costs nothing: the engine
// keeps the lease renewed meanwhile, and the caller's lease runs from the hand-over.
func TestClaim_PreparationLongerThanTheLease(t *testing.T) {
	t.Parallel()
	const ttl = 1500 * time.Millisecond
	b := pullEngine(t, ttl)
	m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}, RetryBudget: budget(0)})
	start := time.Now()
	c, err := b.e.Claim(b.ctx, engine.ClaimRequest{AgentID: "slow-host"}, slowPreparer(2*ttl))
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
}

// A mission cancelled while its workspace is prepared is not handed over: the claim moves on
// to the next mission, and nobody is told about an epoch it never presented.
func TestClaim_MissionCancelledWhilePreparingMovesOn(t *testing.T) {
	t.Parallel()
	const ttl = 3 * time.Second
	b := pullEngine(t, ttl)
	first := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}, Priority: 1})
	second := b.create(engine.MissionSpec{WriteArea: []string{"b/**"}, Priority: 2})
	prepare := func(ctx context.Context, m *domain.Mission) (engine.Workspace, json.RawMessage, error) {
		if m.ID == first.ID {
			_, err := b.e.Cancel(context.Background(), m.ID, "not needed", false, "person")
			require.NoError(t, err)
			time.Sleep(ttl/3 + 300*time.Millisecond) // past a renewal: the engine notices it there
		}
		return engine.Workspace{Path: "/ws", Strategy: "worktree"}, nil, nil
	}
	c, err := b.e.Claim(b.ctx, engine.ClaimRequest{AgentID: "w"}, prepare)
	require.NoError(t, err)
	require.Equal(t, second.ID, c.Mission.ID)
	f := b.get(first.ID)
	require.Equal(t, domain.StateCancelled, f.State)
	require.Nil(t, f.LastFailure, "the cancelled mission was not failed by the claim")
	_, err = b.e.Complete(b.ctx, c.Mission.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)

	// Every mission lost: the caller is told what happened, as "no work", in words.
	third := b.create(engine.MissionSpec{WriteArea: []string{"c/**"}})
	lose := func(ctx context.Context, m *domain.Mission) (engine.Workspace, json.RawMessage, error) {
		_, err := b.e.Cancel(context.Background(), m.ID, "not needed", false, "person")
		require.NoError(t, err)
		return engine.Workspace{Path: "/ws", Strategy: "worktree"}, nil, nil // the hand-over notices
	}
	_, err = b.e.Claim(b.ctx, engine.ClaimRequest{AgentID: "w"}, lose)
	var lost *engine.ClaimLostError
	require.ErrorAs(t, err, &lost)
	require.ErrorIs(t, err, domain.ErrNoWork)
	require.Equal(t, third.ID, lost.MissionID)
	require.Contains(t, err.Error(), "was cancelled while its workspace was being prepared")
	require.NotContains(t, err.Error(), "you presented")
}

// A claim whose request ends while the workspace is prepared abandons the attempt (no
// budget) instead of leaving it leased to nobody or failing it.
func TestClaim_CallerGoneWhilePreparingAbandons(t *testing.T) {
	t.Parallel()
	b := pullEngine(t, time.Second)
	m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}, RetryBudget: budget(0)})
	ctx, cancel := context.WithCancel(context.Background())
	prepare := func(pctx context.Context, _ *domain.Mission) (engine.Workspace, json.RawMessage, error) {
		cancel()
		<-pctx.Done()
		return engine.Workspace{}, nil, pctx.Err()
	}
	_, err := b.e.Claim(ctx, engine.ClaimRequest{AgentID: "gone"}, prepare)
	require.ErrorIs(t, err, context.Canceled)
	d, err := b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, d.Mission.State)
	require.Zero(t, d.Mission.AttemptsUsed)
	require.Equal(t, 1, d.Mission.Abandons)
	require.Len(t, d.Attempts, 1)
	require.Equal(t, domain.OutcomeAbandoned, d.Attempts[0].Outcome)
	require.Contains(t, d.Attempts[0].Summary, "ended before its result was ready")
}

// A workspace that cannot be made fails the attempt within its budget, and the error names
// the mission, the cause and the decision.
func TestClaim_WorkspaceFailureSaysWhat(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}, RetryBudget: budget(2)})
	prepare := func(context.Context, *domain.Mission) (engine.Workspace, json.RawMessage, error) {
		return engine.Workspace{}, nil, errors.New("git worktree add: disk full")
	}
	_, err := b.e.Claim(b.ctx, engine.ClaimRequest{AgentID: "w"}, prepare)
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
