package engine_test

import (
	"fmt"
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
