package tools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// schedulerPull is a real scheduler's pull service on the test's engine (real worktrees).
func schedulerPull(t testing.TB, eng *engine.Engine, dir string) Pull {
	wt, err := worktree.NewManager(worktree.Config{DataDir: dir})
	require.NoError(t, err)
	s, err := scheduler.New(eng, wt, nil, scheduler.Config{DataDir: dir, CleanupEvery: -1,
		RateLimit: engine.RatePolicy{Margin: time.Second}})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Stop(context.Background()))
		require.NoError(t, wt.Close())
	})
	return s.Pull()
}

// Over the MCP client: a pull-mode agent's fail_mission with kind rate_limit spends no retry
// budget and pauses its group until the reset it gave plus the margin; its claim_mission is
// refused with the hold's sentence ("profile P rate-limited until T") while another agent
// claims; after the reset it claims again. rate_limit with another kind is a bad argument.
func TestPull_RateLimitFailureOverMCP(t *testing.T) {
	b := setup(t, setupOpts{pull: schedulerPull})
	m := b.createMission(map[string]any{"title": "limited"})
	c := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "puller"})
	require.True(t, c.Claimed, c.Reason)
	f := map[string]any{"mission_id": m.ID, "epoch": c.Epoch}
	reset := b.clock.Now().Add(time.Minute).UTC().Truncate(time.Second)
	require.Contains(t, fails(b, "fail_mission", with(f, "failure", map[string]any{"kind": "test"},
		"rate_limit", map[string]any{"resets_at": reset})), "rate_limit")
	res := ok[FailResult](b, "fail_mission", with(f, "failure", map[string]any{"kind": "rate_limit", "summary": "429"},
		"rate_limit", map[string]any{"resets_at": reset, "limit_type": "five_hour"}))
	require.Equal(t, domain.StatePending, res.Mission.State)
	require.Equal(t, 0, res.Mission.AttemptsUsed, "no retry budget spent")

	refused := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "puller", "wait_seconds": 5})
	require.False(t, refused.Claimed)
	want := "profile puller rate-limited until " + reset.Add(time.Second).Format(time.RFC3339)
	require.True(t, strings.HasPrefix(refused.Reason, want), refused.Reason)
	other := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "other"})
	require.True(t, other.Claimed, "another agent is another group: %s", other.Reason)
	require.True(t, ok[Recorded](b, "yield_mission", map[string]any{"mission_id": m.ID, "epoch": other.Epoch}).Recorded)

	b.clock.Advance(time.Minute + 2*time.Second)
	again := ok[ClaimResult](b, "claim_mission", map[string]any{"agent_id": "puller"})
	require.True(t, again.Claimed, again.Reason)
	require.Equal(t, m.ID, again.Mission.ID)
}
