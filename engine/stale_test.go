package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// racingStore is the SQLite store with another writer's commit slipped in before the engine's
// guarded statement, as a backend with concurrent writers at READ COMMITTED allows: just
// before the first MissionSet of an Update, the row is moved on (its epoch bumped, through a
// real guarded statement on the same transaction), so the engine's own guard then misses on
// the real database.
type racingStore struct {
	engine.Store
	armed bool
}

func (s *racingStore) Update(ctx context.Context, fn func(engine.Tx) error) error {
	return s.Store.Update(ctx, func(tx engine.Tx) error {
		return fn(&racingTx{Tx: tx, s: s})
	})
}

type racingTx struct {
	engine.Tx
	s *racingStore
}

func (t *racingTx) MissionSet(ctx context.Context, c engine.MissionChange) error {
	if err := t.race(ctx, c.Row.ID); err != nil {
		return err
	}
	return t.Tx.MissionSet(ctx, c)
}

func (t *racingTx) MissionComplete(ctx context.Context, p engine.CompleteParams) (domain.Mission, error) {
	if err := t.race(ctx, p.Fence.MissionID); err != nil {
		return domain.Mission{}, err
	}
	return t.Tx.MissionComplete(ctx, p)
}

// race moves mission id on (its epoch bumped) once, when armed.
func (t *racingTx) race(ctx context.Context, id string) error {
	if !t.s.armed {
		return nil
	}
	t.s.armed = false
	other, err := t.MissionGet(ctx, id)
	if err != nil {
		return err
	}
	moved := other
	moved.Lease.Epoch++
	return t.Tx.MissionSet(ctx, engine.MissionChange{Row: &moved,
		From: engine.Guard{State: other.State, Epoch: other.Lease.Epoch}, Set: engine.FieldEpoch})
}

// A guard that misses inside the engine's own transaction is a lost race, not a bug: the
// operation fails as stale (ErrGuard; ErrLeaseLost for the lease holder), the transaction
// rolls back whole (no attempt row, no event), and the mission is as the other writer left it.
// A failure reads the mission and then writes it (MissionSet), so the race lands between.
func TestGuardMiss_IsALostRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := teststore.New(t)
	rs := &racingStore{Store: st}
	e := engine.New(rs, engine.Options{Clock: engine.NewFakeClock(t0), DefaultRepository: "/repo"})
	_, err := e.CreateMission(ctx, engine.MissionSpec{Title: "race", WriteArea: []string{"a/**"}}, "test")
	require.NoError(t, err)
	m, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: "w", Start: true})
	require.NoError(t, err)
	before, err := e.GetMission(ctx, m.ID)
	require.NoError(t, err)

	rs.armed = true
	fail := engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureTest, Summary: "tests fail"}}
	_, err = e.Fail(ctx, m.Fence(), fail)
	var stale *engine.StaleError
	require.ErrorAs(t, err, &stale)
	require.ErrorIs(t, err, domain.ErrGuard)
	require.ErrorIs(t, err, domain.ErrLeaseLost, "the lease holder is told its lease is gone")
	require.NotContains(t, err.Error(), "changed under its own transaction")
	require.Contains(t, err.Error(), "moved by another writer")

	after, err := e.GetMission(ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StateRunning, after.Mission.State, "nothing of the failure was written")
	require.Equal(t, before.Mission.Lease.Epoch, after.Mission.Lease.Epoch, "the whole transaction rolled back, the racing write with it")
	require.Len(t, after.Attempts, len(before.Attempts))

	// Without the race the same failure goes through.
	_, err = e.Fail(ctx, m.Fence(), fail)
	require.NoError(t, err)
	done, err := e.GetMission(ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, done.Mission.State)
}

// A completion writes without reading first (Tx.MissionComplete); another writer that moved
// the lease on just before makes its guard miss, and the lease holder is told its lease is
// lost (the read that follows the miss finds the new epoch), with nothing of the completion
// written.
func TestComplete_RacedGuardIsALostLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := teststore.New(t)
	rs := &racingStore{Store: st}
	e := engine.New(rs, engine.Options{Clock: engine.NewFakeClock(t0), DefaultRepository: "/repo"})
	_, err := e.CreateMission(ctx, engine.MissionSpec{Title: "race", WriteArea: []string{"a/**"}}, "test")
	require.NoError(t, err)
	m, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: "w", Start: true})
	require.NoError(t, err)

	rs.armed = true
	_, err = e.Complete(ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
	require.ErrorIs(t, err, domain.ErrLeaseLost)
	require.False(t, rs.armed, "the race ran")
	after, err := e.GetMission(ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StateRunning, after.Mission.State, "nothing of the completion was written")
	require.Equal(t, m.Lease.Epoch, after.Mission.Lease.Epoch, "the whole transaction rolled back, the racing write with it")
	require.Empty(t, after.Attempts)

	_, err = e.Complete(ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)
}

// save writes only what a transition changed: a progress report rewrites the progress, the
// lease expiry, contact and updated_at, and nothing else (the brief a person edited meanwhile
// through another path would survive).
func TestSave_WritesOnlyTheChangedFields(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var sets []engine.MissionFields
	st := teststore.New(t)
	rec := &recordingStore{Store: st, sets: &sets, completes: new(int)}
	clock := engine.NewFakeClock(t0)
	e := engine.New(rec, engine.Options{Clock: clock, DefaultRepository: "/repo"})
	_, err := e.CreateMission(ctx, engine.MissionSpec{Title: "fields", WriteArea: []string{"a/**"}}, "test")
	require.NoError(t, err)
	m, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: "w", Start: true})
	require.NoError(t, err)

	sets = nil
	clock.Advance(time.Second)
	tenth := 10.0
	require.NoError(t, e.Progress(ctx, m.Fence(), &tenth, "a tenth"))
	require.Equal(t, []engine.MissionFields{engine.FieldProgress | engine.FieldLeaseExpiresAt | engine.FieldContacted | engine.FieldUpdatedAt}, sets)

	sets = nil
	clock.Advance(time.Second)
	_, err = e.Complete(ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)
	require.Empty(t, sets, "a completion without usage is the one MissionComplete statement")
	require.Equal(t, 1, *rec.completes)

	_, err = e.CreateMission(ctx, engine.MissionSpec{Title: "with usage", WriteArea: []string{"b/**"}}, "test")
	require.NoError(t, err)
	m, err = e.Acquire(ctx, engine.AcquireRequest{AgentID: "w", Start: true})
	require.NoError(t, err)
	sets = nil
	_, err = e.Complete(ctx, m.Fence(), domain.WorkerResult{Summary: "done", Usage: &domain.Usage{InputTokens: 5}})
	require.NoError(t, err)
	require.Equal(t, []engine.MissionFields{engine.FieldUsage}, sets, "the usage sum is written after the completion")
	require.Equal(t, 2, *rec.completes)
}

type recordingStore struct {
	engine.Store
	sets      *[]engine.MissionFields
	completes *int // MissionComplete calls
}

func (s *recordingStore) Update(ctx context.Context, fn func(engine.Tx) error) error {
	return s.Store.Update(ctx, func(tx engine.Tx) error { return fn(&recordingTx{Tx: tx, s: s}) })
}

type recordingTx struct {
	engine.Tx
	s *recordingStore
}

func (t *recordingTx) MissionSet(ctx context.Context, c engine.MissionChange) error {
	*t.s.sets = append(*t.s.sets, c.Set)
	return t.Tx.MissionSet(ctx, c)
}

func (t *recordingTx) MissionComplete(ctx context.Context, p engine.CompleteParams) (domain.Mission, error) {
	*t.s.completes++
	return t.Tx.MissionComplete(ctx, p)
}
