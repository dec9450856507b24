package scheduler_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// A profile whose agent program does not exist is a toolchain problem a person fixes: the
// mission blocks with an environment escalation that names the program, and keeps its retry
// budget (before, it failed for good as a crash, with no escalation).
func TestDispatch_MissingAgentProgramBlocksWithAnEscalation(t *testing.T) {
	for _, command := range []string{"/no/such/agent", "no-such-agent-on-path"} {
		t.Run(command, func(t *testing.T) {
			h := newHarness(t, func(_ *engine.Options, c *scheduler.Config) {
				c.Profiles = []agent.Profile{{Name: "ghost", Runtime: agent.RuntimeNDJSON, Command: []string{command}, MaxConcurrency: 1}}
			})
			c, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "needs an agent", WriteArea: []string{"a/**"}}, "test")
			require.NoError(t, err)
			h.until("the mission blocks", func() bool { return h.mission(c.Mission.ID).State == domain.StateBlocked })
			m := h.mission(c.Mission.ID)
			require.NotEqual(t, domain.StateFailed, m.State)
			escs, err := h.eng.Escalations(h.ctx, engine.EscalationFilter{State: domain.EscalationOpen, MissionID: m.ID})
			require.NoError(t, err)
			require.Len(t, escs, 1)
			require.Equal(t, "environment", escs[0].Kind)
			require.Equal(t, domain.RoutePerson, escs[0].Route)
			require.Contains(t, escs[0].Reason, "agent program was not found")
			require.Contains(t, escs[0].Reason, command)
			require.Equal(t, 1, strings.Count(escs[0].Reason, "agent program"), "said once: %q", escs[0].Reason)
			require.Contains(t, strings.Join(escs[0].Evidence, "\n"), "agent program not found", "the evidence keeps the whole error")
			require.Contains(t, escs[0].DecisionRequired, "doctor")
		})
	}
}
