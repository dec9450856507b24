package scheduler_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// A 30-mission voyage with hard, soft, conflict and serialization edges, write-area
// conflicts, a flaky mission retried, a landing conflict repaired, a review that asks for a
// repair and a mission blocked for a decision that is then resolved: the voyage completes and
// main holds every mission's work exactly once (issue 6, "How it is checked").
func TestScenario_ThirtyMissionVoyage(t *testing.T) {
	h := newHarness(t)
	var specs []engine.MissionSpec
	var edges []engine.EdgeSpec
	for i := 0; i < 30; i++ {
		key := fmt.Sprintf("m%02d", i)
		file := key + ".txt"
		s := engine.MissionSpec{Key: key, Title: "mission " + key, WriteArea: []string{file},
			Brief: fmt.Sprintf("@write %s \"%s\\n\"\n@commit %s\n@done %s", file, key, key, key)}
		switch {
		case i%5 == 1 && i != 21: // a chain of hard dependencies
			s.DependsOn = []string{fmt.Sprintf("m%02d", i-1)}
		case i%7 == 3:
			edges = append(edges, engine.EdgeSpec{Mission: key, DependsOn: fmt.Sprintf("m%02d", i-2), Type: domain.EdgeSoft})
		case i%9 == 4:
			edges = append(edges, engine.EdgeSpec{Mission: key, DependsOn: fmt.Sprintf("m%02d", i-1), Type: domain.EdgeSerialization})
		case i%11 == 5:
			edges = append(edges, engine.EdgeSpec{Mission: key, DependsOn: fmt.Sprintf("m%02d", i-3), Type: domain.EdgeConflict, Reason: "same subsystem"})
		}
		switch i {
		case 8, 9: // overlapping write areas: a scheduler conflict edge, never at the same time
			s.WriteArea = []string{"area89/**", file}
		case 12: // flaky: fails its first attempt, retried
			s.Brief = "@flaky 1 test \"flaky test\"\n" + s.Brief
		case 20, 21: // both change shared.txt from the same base (dispatched first, together): the
			// second to land conflicts and is repaired
			s.Priority = 20
			s.Brief = fmt.Sprintf("@sleep %dms\n@write shared.txt \"line one\\n%s\\n\"\n@write %s \"%s\\n\"\n@commit %s\n@done",
				100*(i-19), key, file, key, key)
		case 25: // the review asks for a repair
			s.Review = engine.ReviewRequired
			s.Brief = fmt.Sprintf("@write %s \"draft\\n\"\n@commit %s\n@done\n@review verdict minor \"not final\"\n"+
				"@repair write %s \"%s\\n\"\n@repair commit fix %s\n@repair done", file, key, file, key, key)
		case 28: // needs a decision first
			s.Brief = "@block \"which format?\""
		}
		specs = append(specs, s)
	}
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "thirty", Missions: specs, Edges: edges}, "test")
	require.NoError(t, err)
	resolved := false
	h.until("the voyage completes", func() bool {
		if !resolved && h.mission(d.IDs["m28"]).State == domain.StateBlocked {
			brief := "@write m28.txt \"m28\\n\"\n@commit m28\n@done decided"
			_, err := h.eng.UpdateMission(h.ctx, d.IDs["m28"], engine.MissionPatch{Brief: &brief}, "test")
			require.NoError(t, err)
			det, err := h.eng.GetMission(h.ctx, d.IDs["m28"])
			require.NoError(t, err)
			_, err = h.eng.ResolveEscalation(h.ctx, det.Escalation.ID, engine.ResolveRetry, "plain text", "person")
			require.NoError(t, err)
			resolved = true
		}
		return h.voyageState(d.Voyage.ID) == domain.VoyageCompleted
	})
	log := git(t, h.repo, "log", "--format=%s", "main")
	for i := 0; i < 30; i++ {
		key := fmt.Sprintf("m%02d", i)
		body, ok := h.file(key + ".txt")
		require.True(t, ok, key)
		require.Equal(t, key+"\n", body, key)
		want := 1
		if i == 25 {
			require.Equal(t, 1, countLines(log, "fix "+key), "the repair landed once")
		}
		require.Equal(t, want, countLines(log, key), "%s committed and landed exactly once", key)
	}
	shared, _ := h.file("shared.txt")

	require.Contains(t, shared, "m20")
	require.Contains(t, shared, "m21")
	repairs, err := h.eng.ListMissions(h.ctx, engine.MissionFilter{Kind: domain.KindRepair})
	require.NoError(t, err)
	require.Len(t, repairs, 2, "one for the landing conflict, one for the review")
	flaky := h.mission(d.IDs["m12"])
	require.Equal(t, 2, flaky.Attempt)
	require.Empty(t, strings.TrimSpace(git(t, h.repo, "fsck", "--no-progress", "--no-dangling")))
	h.verifyNoEscalationsLeft(d.Voyage.ID)
}

func (h *harness) verifyNoEscalationsLeft(voyage string) {
	h.t.Helper()
	d, err := h.eng.VoyageStatus(h.ctx, voyage)
	require.NoError(h.t, err)
	require.Empty(h.t, d.Escalations)
}
