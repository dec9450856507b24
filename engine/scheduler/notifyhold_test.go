package scheduler_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The planner's budget hold of a mission is recorded once as a mission.held event (what
// notifications send as mission.budget_hold), however many planning steps keep holding it.
func TestLoop_BudgetHoldIsOneEvent(t *testing.T) {
	h := newHarness(t)
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "budget", CostLimitUSD: 1, Missions: []engine.MissionSpec{
		{Key: "a", Title: "expensive", WriteArea: []string{"a.txt"},
			Brief: "@write a.txt a\n@commit a\n@result {\"status\":\"completed\",\"summary\":\"done\",\"usage\":{\"input_tokens\":1000,\"output_tokens\":100,\"cost_usd\":1.5}}"},
		{Key: "b", Title: "after", WriteArea: []string{"b.txt"}, DependsOn: []string{"a"}, Brief: "@write b.txt b\n@commit b\n@done"},
	}}, "test")
	require.NoError(t, err)
	held := func() []domain.Event {
		evs, err := h.eng.Events(h.ctx, engine.EventFilter{MissionID: d.IDs["b"], Types: []string{engine.EventHeld}})
		require.NoError(t, err)
		return evs
	}
	h.until("b is held on the voyage's budget", func() bool {
		return h.mission(d.IDs["b"]).State == domain.StatePending && len(held()) > 0
	})
	for range 5 {
		_, err := h.s.RunOnce(h.ctx)
		require.NoError(t, err)
	}
	evs := held()
	require.Len(t, evs, 1, "one event for the wait")
	var data map[string]any
	require.NoError(t, json.Unmarshal(evs[0].Data, &data))
	require.Equal(t, engine.WhyBudget, data["code"])
	require.Equal(t, "voyage "+d.Voyage.ID+"'s cost budget is spent ($1.5000 of $1.0000): nothing more starts until it is raised (update_voyage cost_limit_usd)",
		data["message"], "the one sentence of a spent budget (engine.Breach.HoldMessage)")
	require.Equal(t, d.Voyage.ID, evs[0].VoyageID)
}

// Found by issue 15's fresh-user trial: while a mission without a write area of another
// voyage runs alone in the repository, a mission held by its spent voyage budget keeps the
// budget hold (it would wait for the budget again the moment the repository is free), so its
// wait stays one mission.held event — one mission.budget_hold notification — and says the
// decision it waits for throughout, instead of flipping to repository_busy and back.
func TestLoop_BudgetHoldStaysWhileAnotherMissionRunsAloneInTheRepository(t *testing.T) {
	h := newHarness(t)
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "budget", CostLimitUSD: 1, Missions: []engine.MissionSpec{
		{Key: "a", Title: "expensive", WriteArea: []string{"a.txt"},
			Brief: "@write a.txt a\n@commit a\n@result {\"status\":\"completed\",\"summary\":\"done\",\"usage\":{\"input_tokens\":1000,\"output_tokens\":100,\"cost_usd\":1.5}}"},
		{Key: "b", Title: "after", WriteArea: []string{"b.txt"}, DependsOn: []string{"a"}, Brief: "@write b.txt b\n@commit b\n@done"},
	}}, "test")
	require.NoError(t, err)
	b := d.IDs["b"]
	held := func() int {
		evs, err := h.eng.Events(h.ctx, engine.EventFilter{MissionID: b, Types: []string{engine.EventHeld}})
		require.NoError(t, err)
		return len(evs)
	}
	holdCode := func() string {
		hs, err := h.eng.Holds(h.ctx)
		require.NoError(t, err)
		return hs[b].Reason.Code
	}
	h.until("b is held on the voyage's budget", func() bool { return holdCode() == engine.WhyBudget })
	require.Equal(t, 1, held())

	serial, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "alone in the repository",
		Brief: "@sleep 500ms\n@write s.txt s\n@commit s\n@done"}, "test")
	require.NoError(t, err)
	ran, codes := false, map[string]bool{}
	h.until("the mission without a write area ran and landed", func() bool {
		m := h.mission(serial.Mission.ID)
		ran = ran || m.State == domain.StateRunning
		codes[holdCode()] = true
		return m.State == domain.StateCompleted && m.Landing == domain.LandingLanded
	})
	require.True(t, ran, "seen running while b was held")
	require.Equal(t, map[string]bool{engine.WhyBudget: true}, codes, "b's hold stayed the budget's")
	for range 3 {
		_, err := h.s.RunOnce(h.ctx)
		require.NoError(t, err)
	}
	require.Equal(t, 1, held(), "one event for the one wait")
	require.Equal(t, domain.StatePending, h.mission(b).State)
}
