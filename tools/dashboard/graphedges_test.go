package dashboard_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// review adds a review mission of subject to the voyage, as the lander does.
func (f *fixture) review(voyageID, subject string) domain.Mission {
	f.t.Helper()
	m, err := f.eng.CreateMission(f.ctx, engine.MissionSpec{Title: "review " + subject, Kind: domain.KindReview,
		SubjectID: subject, VoyageID: voyageID}, "test")
	require.NoError(f.t, err)
	return m.Mission
}

// The voyage graph links a review mission to the mission it reviews, and keeps the conflict
// edge of two missions after one of them finished (the store deletes it; its event is left).
func TestVoyageGraph_ReviewAndEndedConflictEdges(t *testing.T) {
	f := start(t, "")
	d := f.voyage()
	var g dashboard.VoyagePage
	f.getJSON("/api/voyages/"+d.Voyage.ID, &g)
	require.Empty(t, g.Subjects)
	require.Empty(t, g.EndedConflicts)
	conflicts := func(es []domain.Dependency) []domain.Dependency {
		var out []domain.Dependency
		for _, e := range es {
			if e.Type == domain.EdgeConflict {
				out = append(out, e)
			}
		}
		return out
	}
	live := conflicts(g.Edges)
	require.Len(t, live, 1, "c and d share a write area")

	rv := f.review(d.Voyage.ID, d.IDs["b"])
	c := f.run(d.IDs["c"])
	_, err := f.eng.Complete(f.ctx, c.Fence(), domain.WorkerResult{Status: domain.ResultCompleted, Summary: "written"})
	require.NoError(t, err)

	g = dashboard.VoyagePage{}
	f.getJSON("/api/voyages/"+d.Voyage.ID, &g)
	require.Equal(t, []engine.SubjectEdge{{MissionID: rv.ID, SubjectID: d.IDs["b"], Kind: domain.KindReview}}, g.Subjects)
	require.Empty(t, conflicts(g.Edges), "the store dropped the conflict when c completed")
	require.Len(t, g.EndedConflicts, 1)
	ended := g.EndedConflicts[0]
	require.ElementsMatch(t, []string{live[0].MissionID, live[0].DependsOn}, []string{ended.MissionID, ended.DependsOn})
	require.Equal(t, domain.EdgeConflict, ended.Type)
	require.Equal(t, live[0].Source, ended.Source, "still an inferred conflict")
	require.Equal(t, live[0].Reason, ended.Reason)
}
