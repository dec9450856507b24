package scheduler_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// A pull-mode agent that fails with kind rate_limit pauses its limit group like a managed
// agent's report does: the window is recorded until the reset plus the margin, the mission
// goes back to pending with no retry spent, the agent's claims are refused with the hold's
// sentence ("profile P rate-limited until T") and nothing acquired, another agent (another
// group) still claims, and after the reset the agent claims again; its completion lifts the
// window.
func TestPull_RateLimitFailurePausesTheAgentsGroup(t *testing.T) {
	h := newHarness(t, withConfig(func(c *scheduler.Config) {
		c.Profiles = nil
		c.RateLimit = engine.RatePolicy{Margin: 10 * time.Millisecond}
	}))
	m := h.create(engine.MissionSpec{Title: "first", WriteArea: []string{"a/**"}, Priority: 1})
	other := h.create(engine.MissionSpec{Title: "second", WriteArea: []string{"b/**"}, Priority: 2})
	pull := h.s.Pull()
	c := h.claim("puller")
	require.Equal(t, m.ID, c.Mission.ID)
	reset := time.Now().Add(3 * time.Second).Truncate(time.Second)
	failed, err := pull.Fail(h.ctx, c.Mission.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureRateLimit,
		Summary: "429 usage window exhausted"}}, &agent.RateLimit{ResetsAt: reset, LimitType: "five_hour"})
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, failed.State)
	require.Equal(t, 0, failed.AttemptsUsed, "no retry budget spent")

	ws, err := h.eng.RateWindows(h.ctx)
	require.NoError(t, err)
	w, ok := ws["puller"]
	require.True(t, ok, "the agent's group (its id) is paused")
	require.Equal(t, engine.RatePaused, w.Status)
	require.True(t, w.Until.Equal(reset.Add(10*time.Millisecond)), "until the reset plus the margin: %v", w.Until)

	_, err = pull.Claim(h.ctx, engine.ClaimRequest{AgentID: "puller"})
	var limited *engine.RateLimitedError
	require.True(t, errors.As(err, &limited), "refused: %v", err)
	require.Equal(t, engine.WhyRateLimited, limited.Reason.Code)
	require.True(t, strings.HasPrefix(limited.Error(), "profile puller rate-limited until "+reset.Add(10*time.Millisecond).UTC().Format(time.RFC3339)), limited.Error())
	got, err := h.eng.GetMission(h.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, 1, got.Mission.Attempt, "the refusal acquired nothing")

	o := h.claim("another")
	require.Equal(t, m.ID, o.Mission.ID, "another agent is another group")
	require.NoError(t, h.eng.Release(h.ctx, o.Mission.Fence(), "test: give it back"))

	var again engine.Claimed
	testenv.WaitForState(t, "a claim after the window's reset", func() bool {
		again, err = pull.Claim(h.ctx, engine.ClaimRequest{AgentID: "puller"})
		return err == nil || !errors.As(err, &limited)
	}, func() string { return fmt.Sprintf("still refused long after the reset: %v", err) })
	require.NoError(t, err)
	require.False(t, time.Now().Before(reset), "not before the reset")
	require.Contains(t, []string{m.ID, other.ID}, again.Mission.ID)
	_, err = pull.Complete(h.ctx, again.Mission.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)
	ws, err = h.eng.RateWindows(h.ctx)
	require.NoError(t, err)
	require.NotContains(t, ws, "puller", "a completion lifts the window")
}
