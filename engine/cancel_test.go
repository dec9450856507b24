package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// errDisk stands for a read that fails inside a write transaction (I/O error, corruption).
var errDisk = errors.New("disk I/O error (injected)")

// faultyStore is the real SQLite store with reads of chosen ids failing inside write
// transactions: the faults engine/cancel.go used to drop.
type faultyStore struct {
	engine.Store
	mu   sync.Mutex
	fail map[string]bool // mission or escalation ids whose read fails
}

func (s *faultyStore) failReads(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = map[string]bool{}
	for _, id := range ids {
		s.fail[id] = true
	}
}

func (s *faultyStore) failing(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fail[id]
}

func (s *faultyStore) Update(ctx context.Context, fn func(engine.Tx) error) error {
	return s.Store.Update(ctx, func(tx engine.Tx) error { return fn(faultyTx{Tx: tx, s: s}) })
}

type faultyTx struct {
	engine.Tx
	s *faultyStore
}

func (t faultyTx) MissionGet(ctx context.Context, id string) (domain.Mission, error) {
	if t.s.failing(id) {
		return domain.Mission{}, errDisk
	}
	return t.Tx.MissionGet(ctx, id)
}

func (t faultyTx) EscalationGet(ctx context.Context, id string) (domain.Escalation, error) {
	if t.s.failing(id) {
		return domain.Escalation{}, errDisk
	}
	return t.Tx.EscalationGet(ctx, id)
}

// withFaults gives b an engine over the same SQLite file whose reads of chosen ids fail.
func withFaults(b *bundle) (*engine.Engine, *faultyStore) {
	fs := &faultyStore{Store: b.st}
	return engine.New(fs, engine.Options{Clock: b.clock, DefaultRepository: "/repo"}), fs
}

// Issue 13 item 5 (engine/cancel.go): a read that fails while cancelling a voyage aborts the
// whole cancel, so no voyage is marked cancelled with a mission still pending.
func TestCancelVoyage_ReadErrorAbortsAndChangesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a/**"}}, {Key: "b", Title: "b", WriteArea: []string{"b/**"}}}}, "test")
	require.NoError(t, err)
	e, fs := withFaults(b)
	fs.failReads(d.IDs["b"])
	_, err = e.CancelVoyage(b.ctx, d.Voyage.ID, "stop", "test")
	require.ErrorIs(t, err, errDisk)
	require.Contains(t, err.Error(), "cancel voyage "+d.Voyage.ID)
	vs, err := b.e.VoyageStatus(b.ctx, d.Voyage.ID)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageOpen, vs.Voyage.State)
	require.Equal(t, domain.StatePending, b.get(d.IDs["a"]).State, "the first mission's cancel was rolled back")
	require.Equal(t, domain.StatePending, b.get(d.IDs["b"]).State)
	fs.failReads()
	_, err = e.CancelVoyage(b.ctx, d.Voyage.ID, "stop", "test")
	require.NoError(t, err)
	require.Equal(t, domain.StateCancelled, b.get(d.IDs["b"]).State)
	b.verifyReplay()
}

// escalation reads one escalation by id, open or resolved.
func escalation(b *bundle, id string) domain.Escalation {
	b.t.Helper()
	escs, err := b.e.Escalations(b.ctx, engine.EscalationFilter{Limit: 100})
	require.NoError(b.t, err)
	for _, e := range escs {
		if e.ID == id {
			return e
		}
	}
	b.t.Fatalf("no escalation %s", id)
	return domain.Escalation{}
}

// Cancelling a blocked mission closes its escalation; when the escalation cannot be read the
// cancel fails and leaves mission and escalation as they were, instead of cancelling the
// mission and leaving the escalation open for nobody.
func TestCancel_BlockedMissionEscalationReadError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.inState(domain.StateBlocked)
	e, fs := withFaults(b)
	fs.failReads(m.EscalationID)
	_, err := e.Cancel(b.ctx, m.ID, "not needed", false, "test")
	require.ErrorIs(t, err, errDisk)
	require.Contains(t, err.Error(), "resolve escalation "+m.EscalationID)
	require.Equal(t, domain.StateBlocked, b.get(m.ID).State)
	require.Equal(t, domain.EscalationOpen, escalation(b, m.EscalationID).State)
	fs.failReads()
	_, err = e.Cancel(b.ctx, m.ID, "not needed", false, "test")
	require.NoError(t, err)
	require.Equal(t, domain.EscalationResolved, escalation(b, m.EscalationID).State)
}

// An escalation that blocks two missions stays open while one of them is still blocked; when
// that other mission cannot be read, cancelling the first fails instead of guessing.
func TestCancel_SharedEscalationOtherMissionReadError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	up := b.create(engine.MissionSpec{Title: "upstream", WriteArea: []string{"u/**"}, RetryBudget: budget(0)})
	d1 := b.create(engine.MissionSpec{Title: "d1", WriteArea: []string{"d1/**"}, DependsOn: []string{up.ID}})
	d2 := b.create(engine.MissionSpec{Title: "d2", WriteArea: []string{"d2/**"}, DependsOn: []string{up.ID}})
	b.failRunning(up.ID, domain.Failure{Kind: "test", Summary: "boom"})
	first, second := b.get(d1.ID), b.get(d2.ID)
	require.Equal(t, domain.StateBlocked, first.State)
	require.Equal(t, first.EscalationID, second.EscalationID, "one escalation blocks both")
	e, fs := withFaults(b)
	fs.failReads(d2.ID)
	_, err := e.Cancel(b.ctx, d1.ID, "not needed", false, "test")
	require.ErrorIs(t, err, errDisk)
	require.Contains(t, err.Error(), "resolve escalation "+first.EscalationID)
	require.Equal(t, domain.StateBlocked, b.get(d1.ID).State)
	fs.failReads()
	_, err = e.Cancel(b.ctx, d1.ID, "not needed", false, "test")
	require.NoError(t, err)
	require.Equal(t, domain.EscalationOpen, escalation(b, first.EscalationID).State, "d2 is still blocked by it")
	_, err = e.Cancel(b.ctx, d2.ID, "not needed", false, "test")
	require.NoError(t, err)
	require.Equal(t, domain.EscalationResolved, escalation(b, first.EscalationID).State)
}

// A child that ends tells its waiting parent; when the parent cannot be read the child's
// cancel fails rather than leave the parent waiting for a child that is gone.
func TestCancel_ChildParentReadError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.create(engine.MissionSpec{Title: "parent", WriteArea: []string{"p/**"}})
	run := b.acquire(p.ID, true)
	kids, err := b.e.Spawn(b.ctx, run.Fence(), []engine.MissionSpec{{Title: "child", WriteArea: []string{"c/**"}}})
	require.NoError(t, err)
	require.NoError(t, b.e.Yield(b.ctx, run.Fence(), nil, "spawned", engine.WaitChildren))
	e, fs := withFaults(b)
	fs.failReads(p.ID)
	_, err = e.Cancel(b.ctx, kids[0].ID, "not needed", false, "test")
	require.ErrorIs(t, err, errDisk)
	require.Contains(t, err.Error(), "tell parent "+p.ID)
	require.Equal(t, domain.StatePending, b.get(kids[0].ID).State)
	fs.failReads()
	_, err = e.Cancel(b.ctx, kids[0].ID, "not needed", false, "test")
	require.NoError(t, err)
	require.Equal(t, domain.StateBlocked, b.get(p.ID).State, "the parent is told its child was cancelled")
}
