package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// shared/cases B11: the reaper reads expired leases from a snapshot; a completion that
// commits between that read and the reaper's update wins, and the sweep changes nothing.
func TestB11_ReaperWithStaleSnapshotUpdatesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.inState(domain.StateRunning)
	b.clock.Advance(b.e.LeaseTTL() + time.Second) // the lease expired...
	engine.SetReapHook(b.e, func() {              // ...but the worker completes in the gap
		_, err := b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "finished just after expiry"})
		require.NoError(t, err)
	})
	reaped, err := b.e.ReapExpired(b.ctx, nil)
	require.NoError(t, err)
	require.Empty(t, reaped)
	after := b.get(m.ID)
	require.Equal(t, domain.StateCompleted, after.State, "the completed mission is not moved back")
	require.Equal(t, 1, after.Attempt, "it does not run twice")
	b.verifyReplay()
}

// The opposite order: the sweep wins, and the late result is rejected (never landed).
func TestB11_LateResultAfterReapIsRejected(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.inState(domain.StateRunning)
	b.clock.Advance(b.e.LeaseTTL() + time.Second)
	reaped, err := b.e.ReapExpired(b.ctx, nil)
	require.NoError(t, err)
	require.Equal(t, []string{m.ID}, reaped)
	_, err = b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "too late"})
	require.ErrorIs(t, err, domain.ErrLeaseLost)
	require.Nil(t, b.get(m.ID).Result)
}

// shared/cases B12: a healthy worker keeps its lease for as long as it runs, because expiry
// counts from the last heartbeat, not from the start.
func TestB12_HeartbeatsKeepALongRunAlive(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *engine.Options) { o.LeaseTTL = 5 * time.Second })
	m := b.inState(domain.StateRunning)
	for i := 0; i < 20; i++ { // 20 s of work, a heartbeat every second
		b.clock.Advance(time.Second)
		_, err := b.e.Heartbeat(b.ctx, m.Fence())
		require.NoError(t, err)
		reaped, err := b.e.ReapExpired(b.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, reaped)
	}
	// Heartbeats stop for longer than the TTL: the mission is reclaimed, and the old
	// worker's next heartbeat tells it to stop.
	b.clock.Advance(6 * time.Second)
	reaped, err := b.e.ReapExpired(b.ctx, nil)
	require.NoError(t, err)
	require.Equal(t, []string{m.ID}, reaped)
	_, err = b.e.Heartbeat(b.ctx, m.Fence())
	require.ErrorIs(t, err, domain.ErrLeaseLost)
	other, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "second", MissionID: m.ID})
	if err == nil {
		require.Greater(t, other.Lease.Epoch, m.Lease.Epoch)
	} else {
		require.ErrorIs(t, err, domain.ErrNoWork, "in retry backoff")
	}
}

// Heartbeats within the renew interval do not write; the lease still extends on the next
// one that does.
func TestHeartbeat_WritesAtMostOncePerInterval(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.inState(domain.StateRunning)
	first, err := b.e.Heartbeat(b.ctx, m.Fence())
	require.NoError(t, err)
	require.True(t, first.Written)
	b.clock.Advance(100 * time.Millisecond)
	second, err := b.e.Heartbeat(b.ctx, m.Fence())
	require.NoError(t, err)
	require.False(t, second.Written)
	require.Equal(t, first.ExpiresAt, second.ExpiresAt)
	b.clock.Advance(time.Second)
	third, err := b.e.Heartbeat(b.ctx, m.Fence())
	require.NoError(t, err)
	require.True(t, third.Written)
	require.True(t, third.ExpiresAt.After(first.ExpiresAt))
}

// A lost attempt with a checkpoint resumes from it; a preempted agent is told to yield.
func TestExpiryWithCheckpointAndPreemption(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.acquire(b.create(engine.MissionSpec{Title: "long", WriteArea: []string{"l/**"}}).ID, true)
	require.NoError(t, b.e.Checkpoint(b.ctx, m.Fence(), []byte(`{"done":["step1"]}`), "step 1"))
	require.NoError(t, b.e.Preempt(b.ctx, m.ID, "urgent work", "scheduler"))
	ans, err := b.e.RenewLease(b.ctx, m.Fence())
	require.NoError(t, err)
	require.True(t, ans.Yield)
	b.clock.Advance(b.e.LeaseTTL() + time.Second)
	_, err = b.e.ReapExpired(b.ctx, nil)
	require.NoError(t, err)
	after := b.get(m.ID)
	require.Equal(t, domain.StateInterrupted, after.State)
	b.clock.Advance(time.Hour)
	again := b.acquire(m.ID, true)
	require.JSONEq(t, `{"done":["step1"]}`, string(again.Checkpoint), "the checkpoint is handed on")
	require.False(t, again.Preempt)
	b.verifyReplay()
}

// keep=true renews the lease of an agent known to be alive instead of requeueing it.
func TestReap_KeepRenewsLiveAgents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.inState(domain.StateRunning)
	b.clock.Advance(b.e.LeaseTTL() + time.Second)
	reaped, err := b.e.ReapExpired(b.ctx, func(domain.Mission) bool { return true })
	require.NoError(t, err)
	require.Empty(t, reaped)
	after := b.get(m.ID)
	require.Equal(t, domain.StateRunning, after.State)
	require.True(t, after.Lease.ExpiresAt.After(b.clock.Now()))
}

// Fan-out: a parent spawns children, yields waiting for them, and resumes when they complete.
func TestSpawn_ParentWaitsForChildren(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.create(engine.MissionSpec{Title: "parent", WriteArea: []string{"p/**"}})
	run := b.acquire(p.ID, true)
	kids, err := b.e.Spawn(b.ctx, run.Fence(), []engine.MissionSpec{
		{Title: "child 1", WriteArea: []string{"c1/**"}}, {Title: "child 2", WriteArea: []string{"c2/**"}}})
	require.NoError(t, err)
	require.NoError(t, b.e.Yield(b.ctx, run.Fence(), []byte(`{"phase":"wait"}`), "spawned", engine.WaitChildren))
	why, err := b.e.Explain(b.ctx, p.ID)
	require.NoError(t, err)
	require.Equal(t, engine.WhyChildren, why[0].Code)
	for _, k := range kids {
		require.Equal(t, p.ID, k.ParentID)
		m := b.acquire(k.ID, true)
		_, err := b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "child done"})
		require.NoError(t, err)
	}
	resumed, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "a", Start: true})
	require.NoError(t, err)
	require.Equal(t, p.ID, resumed.ID)
	require.JSONEq(t, `{"phase":"wait"}`, string(resumed.Checkpoint))
	b.verifyReplay()
}

// A child that fails for good blocks the waiting parent; retrying the child reopens it.
func TestSpawn_FailedChildBlocksParent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.create(engine.MissionSpec{Title: "parent", WriteArea: []string{"p/**"}})
	run := b.acquire(p.ID, true)
	kids, err := b.e.Spawn(b.ctx, run.Fence(), []engine.MissionSpec{{Title: "child", WriteArea: []string{"c/**"}, RetryBudget: budget(0)}})
	require.NoError(t, err)
	require.NoError(t, b.e.Yield(b.ctx, run.Fence(), nil, "spawned", engine.WaitChildren))
	b.failRunning(kids[0].ID, domain.Failure{Kind: "test"})
	require.Equal(t, domain.StateBlocked, b.get(p.ID).State)
	_, err = b.e.Retry(b.ctx, kids[0].ID, "t")
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, b.get(p.ID).State)
}

// Acquire returns the mission as committed: from the acquiring statement itself, and after a
// read when the acquire also activated the mission's voyage (which rewrites the row's
// voyage_active copy in the same transaction). Each case compares it with a read afterwards.
func TestAcquire_ReturnsTheMissionAsCommitted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "a", Title: "voyage a", WriteArea: []string{"a/**"}},
		{Key: "b", Title: "voyage b", WriteArea: []string{"b/**"}},
	}}, "test")
	require.NoError(t, err)
	loose := b.create(engine.MissionSpec{Title: "loose", WriteArea: []string{"c/**"}})
	for _, c := range []struct {
		id     string
		start  bool
		active bool
	}{
		{d.IDs["a"], true, true},  // the first start of the voyage activates it
		{d.IDs["b"], false, true}, // the voyage is already active
		{loose.ID, true, false},   // no voyage
	} {
		got := b.acquire(c.id, c.start)
		require.Equal(t, c.active, got.VoyageActive, got.Title)
		require.Equal(t, b.get(c.id), got, got.Title)
	}
}

// In cluster mode a reaped lease's reason names the node it ran on (a dead node is the usual
// cause there), for both the silent agent (abandoned) and the one that went quiet (crash).
func TestReap_ReasonNamesTheNodeOfAClusterLease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, contacted := range []bool{false, true} {
		m := b.create(engine.MissionSpec{Title: fmt.Sprintf("on n2, contacted %v", contacted)})
		n2, err := b.e.NodeLease(b.ctx, engine.NodeTake{Name: "n2", Owner: "n2-process", TTL: 24 * time.Hour})
		require.NoError(t, err)
		run, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "ref", MissionID: m.ID, Start: true,
			Node: &engine.NodeFence{Name: "n2", Owner: "n2-process", Epoch: n2.Epoch}})
		require.NoError(t, err)
		if contacted {
			_, err := b.e.Heartbeat(b.ctx, run.Fence())
			require.NoError(t, err)
		}
		b.clock.Advance(b.e.LeaseTTL() + time.Second)
		reaped, err := b.e.ReapExpired(b.ctx, func(domain.Mission) bool { return false })
		require.NoError(t, err)
		require.Contains(t, reaped, m.ID)
		d, err := b.e.GetMission(b.ctx, m.ID)
		require.NoError(t, err)
		require.NotEmpty(t, d.Attempts)
		last := d.Attempts[len(d.Attempts)-1]
		text := last.Summary
		if last.Failure != nil {
			text += " " + last.Failure.Summary
		}
		require.Contains(t, text, "ref on node n2", "contacted %v: %+v", contacted, last)
	}
}
