package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// A voyage that reaches its cost limit starts nothing new, raises one escalation to the Main
// Agent and settles as blocked; raising the limit lets it finish.
func TestLoop_VoyageCostLimitStopsNewAttempts(t *testing.T) {
	h := newHarness(t)
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "budget", CostLimitUSD: 1, Missions: []engine.MissionSpec{
		{Key: "a", Title: "expensive", WriteArea: []string{"a.txt"},
			Brief: "@write a.txt a\n@commit a\n@result {\"status\":\"completed\",\"summary\":\"done\",\"usage\":{\"input_tokens\":1000,\"output_tokens\":100,\"cost_usd\":1.5}}"},
		{Key: "b", Title: "after", WriteArea: []string{"b.txt"}, DependsOn: []string{"a"}, Brief: "@write b.txt b\n@commit b\n@done"},
	}}, "test")
	require.NoError(t, err)
	h.until("the voyage blocks on its budget", func() bool { return h.voyageState(d.Voyage.ID) == domain.VoyageBlocked })
	require.Equal(t, domain.StatePending, h.mission(d.IDs["b"]).State, "b never started")
	vs, err := h.eng.VoyageStatus(h.ctx, d.Voyage.ID)
	require.NoError(t, err)
	require.InDelta(t, 1.5, vs.Voyage.Usage.CostUSD, 1e-9)
	kinds := map[string]bool{}
	for _, e := range vs.Escalations {
		kinds[e.Kind] = true
	}
	require.True(t, kinds["budget"], "the Main Agent is told: %+v", vs.Escalations)

	limit := 10.0
	_, err = h.eng.UpdateVoyage(h.ctx, d.Voyage.ID, engine.VoyagePatch{CostLimitUSD: &limit, Note: "approved"}, "test")
	require.NoError(t, err)
	h.until("the voyage completes", func() bool { return h.voyageState(d.Voyage.ID) == domain.VoyageCompleted })
}

// Marking a voyage's requirements changed holds its missions that have not started; clearing
// the mark lets them run. Both are events.
func TestLoop_RequirementsChangedHoldsUnstartedMissions(t *testing.T) {
	h := newHarness(t)
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "changing", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a.txt"}, Brief: "@write a.txt a\n@commit a\n@done"}}}, "test")
	require.NoError(t, err)
	yes, no := true, false
	_, err = h.eng.UpdateVoyage(h.ctx, d.Voyage.ID, engine.VoyagePatch{RequirementsChanged: &yes, Note: "scope changed"}, "test")
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		_, err := h.s.RunOnce(h.ctx)
		require.NoError(t, err)
	}
	require.Equal(t, domain.StatePending, h.mission(d.IDs["a"]).State)
	w, err := h.eng.LatestWave(h.ctx)
	require.NoError(t, err)
	require.Contains(t, w.Held[0].Reason, "requirements changed")
	_, err = h.eng.UpdateVoyage(h.ctx, d.Voyage.ID, engine.VoyagePatch{RequirementsChanged: &no}, "test")
	require.NoError(t, err)
	h.until("it lands", func() bool { return h.mission(d.IDs["a"]).Landing == domain.LandingLanded })
	evs, err := h.eng.Events(h.ctx, engine.EventFilter{VoyageID: d.Voyage.ID, Types: []string{"voyage.requirements_changed", "voyage.requirements_resolved"}})
	require.NoError(t, err)
	require.Len(t, evs, 2)
}
