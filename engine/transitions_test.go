package engine_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Every operation in every state: the outcome is the state the transition table allows, or
// the typed error that says why not (ErrIllegalTransition, ErrLeaseLost, ErrNoWork).
func TestTransitions_EveryOperationInEveryState(t *testing.T) {
	t.Parallel()
	type outcome struct {
		to  domain.MissionState // expected state after a successful op ("" = unchanged)
		err error               // expected sentinel
	}
	ok := func(s domain.MissionState) outcome { return outcome{to: s} }
	fail := func(err error) outcome { return outcome{err: err} }
	lost, illegal, nowork := fail(domain.ErrLeaseLost), fail(domain.ErrIllegalTransition), fail(domain.ErrNoWork)
	const (
		P, L, R, I = domain.StatePending, domain.StateLeased, domain.StateRunning, domain.StateInterrupted
		C, F, B, X = domain.StateCompleted, domain.StateFailed, domain.StateBlocked, domain.StateCancelled
	)
	ops := []struct {
		name string
		do   func(b *bundle, m domain.Mission) error
		want map[domain.MissionState]outcome
	}{
		{"acquire", func(b *bundle, m domain.Mission) error {
			_, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "other", MissionID: m.ID})
			return err
		}, map[domain.MissionState]outcome{P: ok(L), I: ok(L), L: nowork, R: nowork, C: nowork, F: nowork, B: nowork, X: nowork}},
		{"start", func(b *bundle, m domain.Mission) error { _, err := b.e.Start(b.ctx, m.Fence()); return err },
			map[domain.MissionState]outcome{L: ok(R), R: illegal, P: lost, I: lost, C: lost, F: lost, B: lost, X: lost}},
		{"heartbeat", func(b *bundle, m domain.Mission) error { _, err := b.e.Heartbeat(b.ctx, m.Fence()); return err },
			map[domain.MissionState]outcome{L: ok(L), R: ok(R), P: lost, I: lost, C: lost, F: lost, B: lost, X: lost}},
		{"progress", func(b *bundle, m domain.Mission) error { return b.e.Progress(b.ctx, m.Fence(), nil, "half") },
			map[domain.MissionState]outcome{L: ok(L), R: ok(R), P: lost, I: lost, C: lost, F: lost, B: lost, X: lost}},
		{"checkpoint", func(b *bundle, m domain.Mission) error {
			return b.e.Checkpoint(b.ctx, m.Fence(), []byte(`{"a":1}`), "")
		},
			map[domain.MissionState]outcome{R: ok(R), L: illegal, P: lost, I: lost, C: lost, F: lost, B: lost, X: lost}},
		{"yield", func(b *bundle, m domain.Mission) error {
			return b.e.Yield(b.ctx, m.Fence(), []byte(`{"a":1}`), "x", "")
		},
			map[domain.MissionState]outcome{R: ok(I), L: illegal, P: lost, I: lost, C: lost, F: lost, B: lost, X: lost}},
		{"complete", func(b *bundle, m domain.Mission) error {
			_, err := b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "s"})
			return err
		}, map[domain.MissionState]outcome{R: ok(C), L: illegal, P: lost, I: lost, C: lost, F: lost, B: lost, X: lost}},
		{"fail", func(b *bundle, m domain.Mission) error {
			_, err := b.e.Fail(b.ctx, m.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: "test"}})
			return err
		}, map[domain.MissionState]outcome{R: ok(F), L: ok(F), P: lost, I: lost, C: lost, F: lost, B: lost, X: lost}},
		{"release", func(b *bundle, m domain.Mission) error { return b.e.Release(b.ctx, m.Fence(), "give back") },
			map[domain.MissionState]outcome{R: ok(P), L: ok(P), P: lost, I: lost, C: lost, F: lost, B: lost, X: lost}},
		{"block", func(b *bundle, m domain.Mission) error {
			_, err := b.e.Block(b.ctx, engine.BlockRequest{MissionID: m.ID, Reason: "r", DecisionRequired: "d"}, "t")
			return err
		}, map[domain.MissionState]outcome{P: ok(B), L: ok(B), R: ok(B), I: ok(B), B: illegal, C: illegal, F: illegal, X: illegal}},
		{"cancel", func(b *bundle, m domain.Mission) error {
			_, err := b.e.Cancel(b.ctx, m.ID, "r", false, "t")
			return err
		},
			map[domain.MissionState]outcome{P: ok(X), L: ok(X), R: ok(X), I: ok(X), B: ok(X), C: illegal, F: illegal, X: illegal}},
		{"retry", func(b *bundle, m domain.Mission) error { _, err := b.e.Retry(b.ctx, m.ID, "t"); return err },
			map[domain.MissionState]outcome{F: ok(P), B: ok(P), X: ok(P), P: illegal, L: illegal, R: illegal, I: illegal, C: illegal}},
		{"preempt", func(b *bundle, m domain.Mission) error { return b.e.Preempt(b.ctx, m.ID, "urgent", "t") },
			map[domain.MissionState]outcome{R: ok(R), P: illegal, L: illegal, I: illegal, C: illegal, F: illegal, B: illegal, X: illegal}},
	}
	for _, op := range ops {
		for _, from := range domain.AllStates() {
			want, listed := op.want[from]
			require.True(t, listed, "%s from %s is not in the expectation table", op.name, from)
			t.Run(op.name+"/"+string(from), func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				m := b.inState(from)
				err := op.do(b, m)
				after := b.get(m.ID)
				if want.err != nil {
					require.Error(t, err)
					require.True(t, errors.Is(err, want.err), "want %v, got %v", want.err, err)
					require.Equal(t, m.State, after.State, "a refused operation changes nothing")
					require.Equal(t, m.Lease.Epoch, after.Lease.Epoch)
					return
				}
				require.NoError(t, err)
				require.Equal(t, want.to, after.State)
				if want.to != from {
					require.True(t, domain.CanTransition(from, want.to, op.name),
						"%s moved %s → %s outside the table", op.name, from, want.to)
				}
				b.verifyReplay()
			})
		}
	}
}

// A stale epoch never changes anything (fencing).
func TestFencing_StaleEpochChangesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.inState(domain.StateRunning)
	stale := m.Fence()
	require.NoError(t, b.e.Release(b.ctx, stale, "give back"))
	fresh := b.acquire(m.ID, true)
	require.Greater(t, fresh.Lease.Epoch, stale.Epoch)
	before := b.get(m.ID)
	for name, err := range map[string]error{
		"heartbeat":  func() error { _, err := b.e.Heartbeat(b.ctx, stale); return err }(),
		"progress":   b.e.Progress(b.ctx, stale, nil, "x"),
		"checkpoint": b.e.Checkpoint(b.ctx, stale, []byte(`1`), ""),
		"yield":      b.e.Yield(b.ctx, stale, nil, "", ""),
		"complete":   func() error { _, err := b.e.Complete(b.ctx, stale, domain.WorkerResult{}); return err }(),
		"fail":       func() error { _, err := b.e.Fail(b.ctx, stale, engine.FailRequest{}); return err }(),
		"release":    b.e.Release(b.ctx, stale, ""),
	} {
		var lost *domain.LeaseLostError
		require.ErrorAs(t, err, &lost, name)
		require.Equal(t, fresh.Lease.Epoch, lost.Current, name)
	}
	after := b.get(m.ID)
	require.Equal(t, before.State, after.State)
	require.Equal(t, before.Lease, after.Lease)
	require.Equal(t, before.UpdatedAt, after.UpdatedAt)
}
