package scheduler_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// The landing part of the tick's plan reaches the person the way holds do: a landing that
// waits for approve_landing says so in get_mission's why_not_running (code landing_approval,
// naming the call), in status's counts per reason and in one info log line; once approved the
// plan moves it, it lands, and the wait is gone from both.
func TestLoop_LandingWaitsReachWhyNotRunningAndStatus(t *testing.T) {
	var logs testenv.SyncBuffer
	gatedRepo := makeRepo(t)
	h := newHarness(t, withConfig(func(c *scheduler.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		c.Repositories = []scheduler.RepoPolicy{{Path: gatedRepo, Landing: scheduler.LandingApproval}}
	}))
	m := h.create(engine.MissionSpec{Title: "gated", Repository: gatedRepo, WriteArea: []string{"gated.txt"},
		Brief: "@write gated.txt g\n@commit gated\n@done"})
	// Before the tick's plan records the wait, get_mission already gives the landing state's
	// own sentence (no since): wait for the recorded one.
	h.until("the plan records the approval wait", func() bool {
		r := h.why(m.ID)
		return r.Code == domain.LandWaitApproval && !r.Since.IsZero()
	})
	r := h.why(m.ID)
	require.Equal(t, domain.LandingApproval, h.mission(m.ID).Landing)
	require.Contains(t, r.Message, "approve_landing "+m.ID)
	s, err := h.eng.Summary(h.ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 1, s.Waiting[domain.LandWaitApproval], "status counts the landing that waits")
	require.Contains(t, logs.String(), "reason_code="+domain.LandWaitApproval)

	_, err = h.eng.ApproveLanding(h.ctx, m.ID, "ok", "person")
	require.NoError(t, err)
	h.until("the approved landing lands", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })
	out := git(t, gatedRepo, "log", "--oneline", "main")
	require.Contains(t, out, "gated", "the approved mission landed on main")
	require.Empty(t, h.why(m.ID).Code, "a landed mission waits for nothing")
	h.until("the wait is no longer counted", func() bool {
		s, err := h.eng.Summary(h.ctx, 0)
		require.NoError(t, err)
		return s.Waiting[domain.LandWaitApproval] == 0
	})
	n := strings.Count(logs.String(), "reason_code="+domain.LandWaitApproval)
	require.LessOrEqual(t, n, 2, "one log line when the wait began, not one per tick:\n%s", logs.String())
}
