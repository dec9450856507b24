package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// TestSummary_MatchesListings checks the counts Summary reads against what the listings show,
// after voyages move through states, a deadline escalates and agents are seen.
func TestSummary_MatchesListings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var voyages []string
	for i := 0; i < 7; i++ {
		d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{{Key: "a", Title: "a"}}}, "t")
		require.NoError(t, err)
		voyages = append(voyages, d.Voyage.ID)
	}
	m := b.acquire("", true) // activates one voyage
	require.NotEmpty(t, m.ID)
	b.create(engine.MissionSpec{Title: "due", Deadline: t0.Add(time.Minute)})
	b.clock.Advance(time.Hour)
	escs, err := b.e.EscalateMissedDeadlines(b.ctx)
	require.NoError(t, err)
	require.Len(t, escs, 1)
	for _, id := range []string{"w1", "w2"} {
		require.NoError(t, b.e.TouchAgent(b.ctx, domain.Agent{ID: id, Kind: "external"}))
	}

	s, err := b.e.Summary(b.ctx, 5)
	require.NoError(t, err)
	all, err := b.e.Voyages(b.ctx, nil, 1000)
	require.NoError(t, err)
	want := map[domain.VoyageState]int{}
	for _, v := range all {
		want[v.State]++
	}
	require.Equal(t, want, s.Voyages)
	require.Equal(t, 1, s.Voyages[domain.VoyageActive])
	require.Len(t, s.RecentVoyages, 1, "only voyages in flight are recent")
	require.Equal(t, domain.VoyageActive, s.RecentVoyages[0].State)
	require.Equal(t, 1, s.OpenEscalations)
	require.Equal(t, 2, s.Agents)
	require.Equal(t, 1, s.Counts[domain.StateLeased]+s.Counts[domain.StateRunning])
	require.Equal(t, 8, s.Counts[domain.StatePending]+s.Counts[domain.StateLeased]+s.Counts[domain.StateRunning], "seven voyages' missions and the one past its deadline")
	require.Len(t, voyages, 7)
}
