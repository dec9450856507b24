package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Tests of the store seam's guarded transitions (MissionSet), the narrow acquire, the change
// channel and the busy retry of Update, as ordinary storage tests (the conformance suite
// takes them over at merge).

func getMission(t *testing.T, s *Store, id string) domain.Mission {
	t.Helper()
	var m domain.Mission
	require.NoError(t, s.View(context.Background(), func(r engine.Reader) error {
		var err error
		m, err = r.MissionGet(context.Background(), id)
		return err
	}))
	return m
}

// MissionSet writes the named fields only, in one UPDATE naming only their columns, guarded by
// state and epoch; the other columns keep what the row had, even where the row passed in says
// otherwise.
func TestMissionSet_WritesOnlyTheNamedFields(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	var stmts []string
	s, err := Open(ctx, filepath.Join(t.TempDir(), "set.db"), Options{Trace: func(q string, _ []any) {
		mu.Lock()
		stmts = append(stmts, q)
		mu.Unlock()
	}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	e := engine.New(s, engine.Options{DefaultRepository: "/repo"})
	created, err := e.CreateMission(ctx, engine.MissionSpec{Title: "t", Brief: "the brief", WriteArea: []string{"a/**"}}, "test")
	require.NoError(t, err)

	row := getMission(t, s, created.Mission.ID)
	row.WaitReason, row.Brief, row.Title = "children", "not written", "not written either"
	mu.Lock()
	stmts = nil
	mu.Unlock()
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
		return tx.MissionSet(ctx, engine.MissionChange{Row: &row, From: engine.Guard{State: domain.StatePending, Epoch: 0},
			Set: engine.FieldWaitReason})
	}))
	got := getMission(t, s, created.Mission.ID)
	require.Equal(t, "children", got.WaitReason)
	require.Equal(t, "the brief", got.Brief, "a field not named is not written")
	require.Equal(t, "t", got.Title)

	mu.Lock()
	defer mu.Unlock()
	var updates []string
	for _, q := range stmts {
		if strings.HasPrefix(q, "UPDATE missions") {
			updates = append(updates, q)
		}
	}
	require.Equal(t, []string{"UPDATE missions SET wait_reason = ? WHERE id = ? AND state = ? AND epoch = ?"}, updates)
}

// A guard that does not match the row (state or epoch) is ErrGuard and writes nothing.
func TestMissionSet_GuardMissWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSeeded(t, 1)
	e := engine.New(s, engine.Options{DefaultRepository: "/repo"})
	m, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: "w", Start: true})
	require.NoError(t, err)
	for _, g := range []engine.Guard{{State: domain.StateLeased, Epoch: m.Lease.Epoch}, {State: domain.StateRunning, Epoch: m.Lease.Epoch + 1}} {
		row := m
		row.Preempt, row.Landing = true, domain.LandingPending
		err := s.Update(ctx, func(tx engine.Tx) error {
			return tx.MissionSet(ctx, engine.MissionChange{Row: &row, From: g, Set: engine.FieldPreempt | engine.FieldLanding})
		})
		require.ErrorIs(t, err, domain.ErrGuard, "guard %+v", g)
		got := getMission(t, s, m.ID)
		require.False(t, got.Preempt, "guard %+v", g)
		require.Equal(t, m.Landing, got.Landing)
	}
}

// Every field round-trips through MissionSet: a row with each field changed, written with
// AllMissionFields, reads back equal.
func TestMissionSet_EveryFieldRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSeeded(t, 1)
	e := engine.New(s, engine.Options{DefaultRepository: "/repo"})
	m, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: "w", Start: true})
	require.NoError(t, err)
	at := time.UnixMilli(1_800_000_000_000).UTC()
	half := 50.0
	row := m
	row.Key, row.Title, row.Brief, row.TargetBranch, row.Priority = "k", "T", "B", "dev", 3
	row.Kind, row.Persona, row.Capabilities, row.WriteArea = domain.KindDebug, "debugger", []string{"go"}, []string{"x/**"}
	row.ModelPolicy = domain.ModelPolicy{Mode: domain.ModeAgentSelect, Allowed: []string{"m1"}}
	row.Workspace, row.Review, row.AcceptanceCriteria, row.Deadline = "snapshot", "required", []string{"ok"}, at
	row.RetryBudget, row.CostLimitUSD, row.State, row.Attempt, row.AttemptsUsed = 7, 1.5, domain.StateInterrupted, 4, 2
	row.Lease = domain.Lease{Owner: "o2", ExpiresAt: at, Epoch: m.Lease.Epoch + 5}
	row.Profile, row.NotBefore, row.WaitReason, row.Preempt, row.Serial = "p", at, "children", true, true
	row.Checkpoint, row.Progress = []byte(`{"step":2}`), &domain.Progress{Percent: &half, Message: "half", At: at}
	row.Result = &domain.WorkerResult{Status: "completed", Summary: "s"}
	row.LastFailure, row.LastSignature = &domain.Failure{Kind: "test", Summary: "red"}, "sig"
	row.Decision = &domain.Decision{Kind: domain.DecisionRetry, Reason: "r", At: at}
	row.Landing, row.Skipped = domain.LandingReview, true
	row.Usage = domain.Usage{InputTokens: 10, OutputTokens: 20, CostUSD: 0.25}
	row.DeadlineEscalated, row.Run, row.EscalationID = true, []byte(`{"mode":"pull"}`), "esc_x"
	row.UpdatedAt, row.StartedAt, row.FinishedAt, row.Contacted, row.Abandons, row.Node = at, at, at, true, 2, "node-2"
	require.Equal(t, engine.AllMissionFields, engine.ChangedFields(&m, &row), "the test changes every field")
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
		return tx.MissionSet(ctx, engine.MissionChange{Row: &row, From: engine.Guard{State: domain.StateRunning, Epoch: m.Lease.Epoch}, Set: engine.AllMissionFields})
	}))
	got := getMission(t, s, m.ID)
	require.Zero(t, engine.ChangedFields(&row, &got)&^(engine.FieldProgress|engine.FieldResult|engine.FieldLastFailure|engine.FieldDecision),
		"every field reads back as written")
	require.Equal(t, *row.Progress.Percent, *got.Progress.Percent)
	require.Equal(t, row.Progress.Message, got.Progress.Message)
	require.Equal(t, row.Result.Summary, got.Result.Summary)
	require.Equal(t, *row.LastFailure, *got.LastFailure)
	require.Equal(t, *row.Decision, *got.Decision)
}

// The acquire statement returns the lease, not the row: what Acquired holds matches the row
// as stored, and the resumed flag follows the checkpoint.
func TestMissionAcquire_ReturnsTheLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSeeded(t, 1)
	now := time.Now().UTC().Truncate(time.Millisecond)
	var a engine.Acquired
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
		var err error
		a, err = tx.MissionAcquire(ctx, engine.AcquireQuery{Now: now, Owner: "agent", Profile: "prof", LeaseTTL: time.Minute, Start: true})
		return err
	}))
	m := getMission(t, s, a.ID)
	require.Equal(t, engine.Acquired{ID: m.ID, VoyageID: m.VoyageID, State: domain.StateRunning, Attempt: 1,
		Lease: domain.Lease{Owner: "agent", ExpiresAt: now.Add(time.Minute), Epoch: m.Lease.Epoch}, Profile: "prof",
		Started: now}, a)
	require.Equal(t, m.Lease, a.Lease)

	m.Checkpoint, m.State, m.Lease.Owner = []byte(`{}`), domain.StateInterrupted, ""
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
		return tx.MissionSet(ctx, engine.MissionChange{Row: &m, From: engine.Guard{State: domain.StateRunning, Epoch: a.Lease.Epoch},
			Set: engine.FieldCheckpoint | engine.FieldState | engine.FieldLeaseOwner})
	}))
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
		var err error
		a, err = tx.MissionAcquire(ctx, engine.AcquireQuery{Now: now, Owner: "agent2", LeaseTTL: time.Minute})
		return err
	}))
	require.True(t, a.Resumed)
	require.Equal(t, domain.StateLeased, a.State)
	require.Zero(t, a.Started)
	require.Equal(t, 2, a.Attempt)
}

// Changes signals a commit made through another Store handle (as another process would) and
// closes when its context ends.
func TestChanges_SignalsAnotherHandlesCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "changes.db")
	watcher, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, watcher.Close()) })
	other, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, other.Close()) })

	wctx, cancel := context.WithCancel(ctx)
	ch := watcher.Changes(wctx, 5*time.Millisecond)
	select {
	case <-ch:
		t.Fatal("a signal before anything was committed")
	case <-time.After(50 * time.Millisecond): // an absence over ten polls: nothing marks "no signal will come"
	}
	require.NoError(t, other.Update(ctx, func(tx engine.Tx) error { return tx.SetPaused(ctx, true) }))
	_, ok := testenv.Receive(t, "a signal for another handle's commit", ch)
	require.True(t, ok)
	cancel()
	for range ch { // drains a late signal, then ends: the channel closes
	}
}

// Another handle of this process on the same database signals at once after its commit, with
// no poll: the subscriber's own poll interval is an hour here.
func TestChanges_SameProcessHandleSignalsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "inproc.db")
	watcher, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, watcher.Close()) })
	other, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, other.Close()) })
	unrelated, err := Open(ctx, filepath.Join(t.TempDir(), "unrelated.db"), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, unrelated.Close()) })

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := watcher.Changes(wctx, time.Hour)
	require.NoError(t, watcher.Update(ctx, func(tx engine.Tx) error { return tx.SetPaused(ctx, true) }))
	require.NoError(t, unrelated.Update(ctx, func(tx engine.Tx) error { return tx.SetPaused(ctx, true) }))
	select {
	case <-ch:
		t.Fatal("a signal for the store's own commit or another database's")
	case <-time.After(100 * time.Millisecond): // an absence: nothing marks "no signal will come"
	}
	require.NoError(t, other.Update(ctx, func(tx engine.Tx) error { return tx.SetPaused(ctx, false) }))
	select {
	case _, ok := <-ch:
		require.True(t, ok)
	case <-time.After(30 * time.Second): // far below the hour of the poll it must not wait for
		t.Fatal("no signal for the other handle's commit")
	}
}

// The channel also closes when the store closes.
func TestChanges_ClosesWithTheStore(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "close.db"), Options{})
	require.NoError(t, err)
	ch := s.Changes(context.Background(), time.Millisecond)
	require.NoError(t, s.Close())
	for range ch {
	}
}

// busyError returns a real SQLITE_BUSY from the driver: a second connection with no busy
// timeout asks for the write lock another connection holds.
func busyError(t *testing.T) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "busy.db")
	holder, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_txlock=immediate")
	require.NoError(t, err)
	defer holder.Close()
	tx, err := holder.Begin()
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.Exec("CREATE TABLE IF NOT EXISTS t (x)")
	require.NoError(t, err)
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_txlock=immediate")
	require.NoError(t, err)
	defer other.Close()
	_, err = other.Begin()
	require.Error(t, err)
	require.True(t, isBusy(err), "want SQLITE_BUSY, got %v", err)
	return err
}

// An Update whose transaction failed on a busy database runs again from the start (its first
// run's writes rolled back) and succeeds; any other error is not retried.
func TestUpdate_RetriesABusyTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	busy := busyError(t)
	s := openSeeded(t, 0)
	runs := 0
	err := s.Update(ctx, func(tx engine.Tx) error {
		runs++
		if err := tx.SetPaused(ctx, runs == 1); err != nil {
			return err
		}
		if runs == 1 {
			return fmt.Errorf("a statement: %w", busy)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 2, runs)
	var paused bool
	require.NoError(t, s.View(ctx, func(r engine.Reader) error {
		paused, err = r.Paused(ctx)
		return err
	}))
	require.False(t, paused, "only the second run's write committed")

	runs = 0
	plain := errors.New("not busy")
	require.ErrorIs(t, s.Update(ctx, func(tx engine.Tx) error { runs++; return plain }), plain)
	require.Equal(t, 1, runs, "an ordinary error is not retried")
}

// In a batch (group commit), a busy request makes the whole batch run again: every request
// succeeds once, and the others' writes are not lost or doubled.
func TestUpdate_BusyInABatchRunsTheBatchAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	busy := busyError(t)
	s := openSeeded(t, 0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := false
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.Update(ctx, func(tx engine.Tx) error {
				mu.Lock()
				first := !failed && i == 7
				failed = failed || first
				mu.Unlock()
				if first {
					return busy
				}
				return tx.AgentUpsert(ctx, &domain.Agent{ID: fmt.Sprintf("agent-%02d", i), LastSeen: time.Now()})
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "request %d", i)
	}
	var n int
	require.NoError(t, s.View(ctx, func(r engine.Reader) error {
		var err error
		n, err = r.AgentCount(ctx)
		return err
	}))
	require.Equal(t, 16, n)
}

// The writer keeps temporary storage in memory, so that the savepoints of group commit never
// spill their sub-journal to a temporary file.
func TestWriter_TempStoreInMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSeeded(t, 0)
	var store int
	require.NoError(t, s.Update(ctx, func(tx engine.Tx) error {
		return tx.(*txn).q.queryRow(ctx, "PRAGMA temp_store").Scan(&store)
	}))
	require.Equal(t, 2, store, "temp_store=MEMORY on the writer's connection")
}
