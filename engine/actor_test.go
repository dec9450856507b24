package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The events a lease holder's calls write name the holder as their actor (the README and
// get_events promise every event an actor); before, start, complete and fail wrote none.
func TestLeaseHolderEvents_CarryTheHolderAsActor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ok := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}})
	m := b.acquire(ok.ID, false)
	m, err := b.e.Start(b.ctx, m.Fence())
	require.NoError(t, err)
	_, err = b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)

	bad := b.create(engine.MissionSpec{WriteArea: []string{"b/**"}})
	f := b.acquire(bad.ID, true)
	_, err = b.e.Fail(b.ctx, f.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureTest, Summary: "red"}})
	require.NoError(t, err)

	for _, id := range []string{ok.ID, bad.ID} {
		evs, err := b.e.Events(b.ctx, engine.EventFilter{MissionID: id, Limit: 100})
		require.NoError(t, err)
		require.NotEmpty(t, evs)
		for _, ev := range evs {
			require.NotEmpty(t, ev.Actor, "event %s of %s has no actor", ev.Type, id)
		}
	}
	evs, err := b.e.Events(b.ctx, engine.EventFilter{MissionID: ok.ID, Types: []string{"mission.completed"}, Limit: 10})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, "agent", evs[0].Actor, "the lease holder completed it")
}

// A repeated complete_mission (a client retrying after a lost answer) is told its result was
// already recorded, not that its result will not be landed.
func TestRepeatedComplete_SaysTheResultWasRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}})
	m := b.acquire(c.ID, true)
	_, err := b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)
	_, err = b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
	require.ErrorIs(t, err, domain.ErrLeaseLost, "still a refusal: the lease is over")
	require.ErrorContains(t, err, "already completed")
	require.NotContains(t, err.Error(), "will not be landed")

	// A stale epoch keeps the plain lease-lost answer.
	stale := m.Fence()
	stale.Epoch--
	_, err = b.e.Complete(b.ctx, stale, domain.WorkerResult{Summary: "late"})
	require.ErrorIs(t, err, domain.ErrLeaseLost)
	require.ErrorContains(t, err, "will not be landed")
}

// A repeated fail_mission (the failure was recorded, the mission is pending for its retry) is
// not told that nothing was recorded.
func TestRepeatedFail_DoesNotDenyTheRecordedFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}})
	m := b.acquire(c.ID, true)
	req := engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureTest, Summary: "red"}}
	_, err := b.e.Fail(b.ctx, m.Fence(), req)
	require.NoError(t, err)
	_, err = b.e.Fail(b.ctx, m.Fence(), req)
	require.ErrorIs(t, err, domain.ErrLeaseLost)
	require.ErrorContains(t, err, "recorded before")
	require.NotContains(t, err.Error(), "will not be recorded")
}
