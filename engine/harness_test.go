package engine_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelper())
	}
	goleak.VerifyTestMain(m)
}

// bundle is one test's engine on a fresh SQLite file with a fake clock.
type bundle struct {
	t     *testing.T
	ctx   context.Context
	st    engine.Store
	e     *engine.Engine
	clock *engine.FakeClock
	path  string
	n     int
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func setup(t *testing.T, opts ...func(*engine.Options)) *bundle {
	t.Helper()
	path := teststore.Location(t)
	st, err := teststore.Open(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	clock := engine.NewFakeClock(t0)
	opt := engine.Options{Clock: clock, DefaultRepository: "/repo", Backoff: engine.Backoff{Initial: time.Second, Max: time.Minute, Jitter: 0.01}}
	for _, o := range opts {
		o(&opt)
	}
	return &bundle{t: t, ctx: context.Background(), st: st, e: engine.New(st, opt), clock: clock, path: path}
}

func (b *bundle) create(spec engine.MissionSpec) domain.Mission {
	b.t.Helper()
	if spec.Title == "" {
		spec.Title = "mission"
	}
	c, err := b.e.CreateMission(b.ctx, spec, "test")
	require.NoError(b.t, err)
	return c.Mission
}

func (b *bundle) acquire(id string, start bool) domain.Mission {
	b.t.Helper()
	m, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "agent", MissionID: id, Start: start})
	require.NoError(b.t, err)
	return m
}

func (b *bundle) get(id string) domain.Mission {
	b.t.Helper()
	d, err := b.e.GetMission(b.ctx, id)
	require.NoError(b.t, err)
	return d.Mission
}

func (b *bundle) verifyReplay() {
	b.t.Helper()
	diffs, err := b.e.VerifyReplay(b.ctx)
	require.NoError(b.t, err)
	require.Empty(b.t, diffs)
}

func budget(n int) *int { return &n }

// inState makes a mission in state s and returns it as it stands.
func (b *bundle) inState(s domain.MissionState) domain.Mission {
	b.t.Helper()
	ctx := b.ctx
	b.n++
	m := b.create(engine.MissionSpec{RetryBudget: budget(0), WriteArea: []string{fmt.Sprintf("area%d/**", b.n)}})
	switch s {
	case domain.StatePending:
	case domain.StateLeased:
		m = b.acquire(m.ID, false)
	case domain.StateRunning:
		m = b.acquire(m.ID, true)
	case domain.StateInterrupted:
		m = b.acquire(m.ID, true)
		require.NoError(b.t, b.e.Yield(ctx, m.Fence(), []byte(`{"step":1}`), "test", ""))
	case domain.StateCompleted:
		m = b.acquire(m.ID, true)
		_, err := b.e.Complete(ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
		require.NoError(b.t, err)
	case domain.StateFailed:
		m = b.acquire(m.ID, true)
		_, err := b.e.Fail(ctx, m.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: "test", Summary: "boom"}})
		require.NoError(b.t, err)
	case domain.StateBlocked:
		_, err := b.e.Block(ctx, engine.BlockRequest{MissionID: m.ID, Reason: "why", DecisionRequired: "what"}, "test")
		require.NoError(b.t, err)
	case domain.StateCancelled:
		_, err := b.e.Cancel(ctx, m.ID, "test", false, "test")
		require.NoError(b.t, err)
	}
	m = b.get(m.ID)
	require.Equal(b.t, s, m.State)
	return m
}
