package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// A completion without usage counts what its attempt reported while running: on the mission,
// in the result and the attempt record; the running row goes. The mission returned is the row
// as stored.
func TestComplete_CountsItsAttemptsRunningSpend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "a", WriteArea: []string{"a/**"}})
	run := b.acquire(m.ID, true)
	_, err := b.e.ReportUsage(b.ctx, engine.RunningUsage{MissionID: m.ID, Epoch: run.Lease.Epoch, Usage: domain.Usage{InputTokens: 42, CostUSD: 0.01}})
	require.NoError(t, err)
	got, err := b.e.Complete(b.ctx, run.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)
	want := domain.Usage{InputTokens: 42, CostUSD: 0.01}
	require.Equal(t, want, got.Usage)
	require.Equal(t, &want, got.Result.Usage)
	d, err := b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, d.Mission, got, "the mission returned is the row as stored")
	require.Nil(t, d.RunningUsage)
	require.Len(t, d.Attempts, 1)
	require.Equal(t, want, d.Attempts[0].Usage)
	require.Equal(t, domain.LandingPending, got.Landing)
	b.verifyReplay()
}

// A running spend left by an earlier attempt is not this attempt's: the completion removes it
// without counting it.
func TestComplete_IgnoresAnEarlierAttemptsRunningSpend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "a", WriteArea: []string{"a/**"}})
	first := b.acquire(m.ID, true)
	_, err := b.e.Fail(b.ctx, first.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureTest, Summary: "tests fail"}})
	require.NoError(t, err)
	b.clock.Advance(time.Hour)
	second := b.acquire(m.ID, true)
	require.Equal(t, 2, second.Attempt)
	require.NoError(t, b.st.Update(b.ctx, func(tx engine.Tx) error {
		return tx.UsageRunningPut(b.ctx, &engine.RunningUsage{MissionID: m.ID, Attempt: 1, Epoch: first.Lease.Epoch,
			Usage: domain.Usage{InputTokens: 1000}, UpdatedAt: b.clock.Now()})
	}))
	got, err := b.e.Complete(b.ctx, second.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)
	require.Equal(t, domain.StateCompleted, got.State)
	require.Zero(t, got.Usage.Tokens(), "attempt 1's running spend is not attempt 2's")
	d, err := b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, d.Mission, got)
	require.Nil(t, d.RunningUsage, "the stale row is gone")
}

// A review completes with nothing to land (not_required), in the same transaction.
func TestComplete_AReviewLandsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	subject := b.create(engine.MissionSpec{Title: "work", WriteArea: []string{"a/**"}})
	rev := b.create(engine.MissionSpec{Title: "review", Kind: domain.KindReview, SubjectID: subject.ID})
	run := b.acquire(rev.ID, true)
	got, err := b.e.Complete(b.ctx, run.Fence(), domain.WorkerResult{Summary: "fine", Verdict: domain.VerdictApproved,
		Usage: &domain.Usage{OutputTokens: 7}})
	require.NoError(t, err)
	require.Equal(t, domain.LandingNotRequired, got.Landing)
	require.Equal(t, int64(7), got.Usage.OutputTokens)
	require.Equal(t, b.get(rev.ID), got)
	b.verifyReplay()
}
