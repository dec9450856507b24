package engine_test

import (
	"slices"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// plannerView reads the planner's snapshot of every pending and interrupted mission from the
// real SQLite file, as the scheduler does (one read transaction), and checks that the store's
// candidate order is the planner's Go statement of the pick order.
func (pm *propMachine) plannerView(t *rapid.T) planner.Snapshot {
	v, err := pm.e.PlanningView(pm.ctx, 10*propMaxMissions, pm.now().Add(-time.Hour))
	require.NoError(t, err)
	require.True(t, slices.IsSortedFunc(v.Candidates, func(a, b domain.Mission) int { return planner.PickOrder(&a, &b) }),
		"the store's candidate order is not planner.PickOrder: %v", ids(v.Candidates))
	return planner.Snapshot{Missions: v.Candidates, Edges: v.Edges, Paused: v.Paused, Running: v.Live}
}

// plannerFirst is the planner's first runnable mission in pick order ("" when none): what
// acquire-next must take (AcquireNext checks the two agree).
func (pm *propMachine) plannerFirst(t *rapid.T) string {
	return planner.FirstRunnable(pm.plannerView(t), pm.now())
}

// plannerBlockers is what the planner's runnable rule says of one mission (nil: runnable).
func (pm *propMachine) plannerBlockers(t *rapid.T, id string) []engine.Reason {
	s := pm.plannerView(t)
	for i := range s.Missions {
		if m := &s.Missions[i]; m.ID == id {
			return engine.Blockers(m, s.Edges[id], s.Paused, s.Running, pm.now())
		}
	}
	d, err := pm.e.GetMission(pm.ctx, id) // not pending or interrupted: the rule says its state
	require.NoError(t, err)
	return engine.Blockers(&d.Mission, engine.Edges{}, s.Paused, s.Running, pm.now())
}

func ids(ms []domain.Mission) []string {
	out := make([]string, len(ms))
	for i := range ms {
		out[i] = ms[i].ID
	}
	return out
}
