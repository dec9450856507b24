package dashboard_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// The agents page's spend counts what each profile spent today on missions that are done
// (a completed one, and a failed one, which neither runs nor waits to land: the page showed
// nothing of it before), plus what runs now (its last usage report): the same spend_daily rows the daily caps count, not the running missions
// alone.
func TestAgents_SpendTodayByProfile(t *testing.T) {
	f := start(t, "")
	d, err := f.eng.Dispatch(f.ctx, engine.VoyageSpec{Title: "spend", Missions: []engine.MissionSpec{
		{Key: "a", Title: "completes"}, {Key: "b", Title: "runs"}, {Key: "c", Title: "fails"}}}, "test")
	require.NoError(t, err)
	a := f.run(d.IDs["a"])
	_, err = f.eng.Complete(f.ctx, a.Fence(), domain.WorkerResult{Status: domain.ResultCompleted, Summary: "done",
		Usage: &domain.Usage{InputTokens: 1000, OutputTokens: 100, CostUSD: 0.4}})
	require.NoError(t, err)
	c := f.run(d.IDs["c"])
	_, err = f.eng.Fail(f.ctx, c.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureTest, Summary: "red"},
		Usage: &domain.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.05}})
	require.NoError(t, err)
	b := f.run(d.IDs["b"])
	_, err = f.eng.ReportUsage(f.ctx, engine.RunningUsage{MissionID: b.ID, Epoch: b.Lease.Epoch, Profile: b.Profile,
		Usage: domain.Usage{InputTokens: 200, OutputTokens: 20, CostUSD: 0.1}})
	require.NoError(t, err)

	var p dashboard.AgentsPage
	f.getJSON("/api/agents", &p)
	require.Len(t, p.Spend, 1, "%+v", p.Spend)
	s := p.Spend[0]
	require.Equal(t, "tester", s.Profile)
	require.Equal(t, engine.DayKey(f.eng.Now(), nil), s.Day)
	require.Equal(t, domain.Usage{InputTokens: 1010, OutputTokens: 105, CostUSD: 0.45}, s.Ended)
	require.Equal(t, domain.Usage{InputTokens: 200, OutputTokens: 20, CostUSD: 0.1}, s.InFlight)
	require.InDelta(t, 0.55, p.CostUSD, 1e-9)
}
