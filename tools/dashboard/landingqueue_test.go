package dashboard_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// TestAgentsPage_LandingQueueSaysWhy: a completed mission whose landing waits for its review
// is in the landing queue with the reason get_mission gives (a landing wait, told as such),
// not the runnable rules' "is completed".
func TestAgentsPage_LandingQueueSaysWhy(t *testing.T) {
	f := start(t, "")
	c, err := f.eng.CreateMission(f.ctx, engine.MissionSpec{Title: "write the glossary", Review: engine.ReviewRequired}, "test")
	require.NoError(t, err)
	m := f.run(c.Mission.ID)
	_, err = f.eng.Complete(f.ctx, m.Fence(), domain.WorkerResult{Status: domain.ResultCompleted, Summary: "written"})
	require.NoError(t, err)
	d, err := f.eng.GetMission(f.ctx, m.ID)
	require.NoError(t, err)
	require.NotEmpty(t, d.WhyNotRunning, "get_mission says why its landing waits")

	var p dashboard.AgentsPage
	f.getJSON("/api/agents", &p)
	require.Len(t, p.Landing, 1)
	require.Equal(t, m.ID, p.Landing[0].Mission.ID)
	require.Equal(t, d.WhyNotRunning, p.Landing[0].Why, "the landing queue says what get_mission says")
	for _, w := range p.Landing[0].Why {
		require.True(t, domain.IsLandingWait(w.Code), "a landing wait, not %q: %s", w.Code, w.Message)
	}
}
