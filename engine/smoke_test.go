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

func TestSmokeLifecycle(t *testing.T) {
	ctx := context.Background()
	st := teststore.New(t)
	clock := engine.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	e := engine.New(st, engine.Options{Clock: clock, DefaultRepository: "/repo"})
	c, err := e.CreateMission(ctx, engine.MissionSpec{Title: "first", WriteArea: []string{"a/**"}}, "test")
	require.NoError(t, err)
	m, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: "agent-1", Start: true})
	require.NoError(t, err)
	require.Equal(t, c.Mission.ID, m.ID)
	require.Equal(t, domain.StateRunning, m.State)
	_, err = e.Heartbeat(ctx, m.Fence())
	require.NoError(t, err)
	done, err := e.Complete(ctx, m.Fence(), domain.WorkerResult{Summary: "ok"})
	require.NoError(t, err)
	require.Equal(t, domain.StateCompleted, done.State)
	diffs, err := e.VerifyReplay(ctx)
	require.NoError(t, err)
	require.Empty(t, diffs)
}
