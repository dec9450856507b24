package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// review: required runs a reviewer on a snapshot before landing; a minor verdict creates a
// repair mission whose landing carries the work.
func TestLoop_ReviewAsksForRepair(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "greeting", WriteArea: []string{"greet.txt"}, Review: engine.ReviewRequired,
		Brief: "@write greet.txt \"helo\\n\"\n@commit greeting\n@done\n" +
			"@review verdict minor \"typo: helo\"\n" +
			"@repair write greet.txt \"hello\\n\"\n@repair commit fix typo\n@repair done fixed"})
	h.until("the work lands through its repair", func() bool { return h.mission(m.ID).Landing == engine.LandingLanded })
	reviews, err := h.eng.ListMissions(h.ctx, engine.MissionFilter{SubjectID: m.ID, Kind: engine.KindReview})
	require.NoError(t, err)
	require.Len(t, reviews, 1)
	require.Equal(t, "minor", reviews[0].Result.Verdict)
	repairs, err := h.eng.ListMissions(h.ctx, engine.MissionFilter{SubjectID: m.ID, Kind: engine.KindRepair})
	require.NoError(t, err)
	require.Len(t, repairs, 1)
	require.Equal(t, engine.LandingLanded, repairs[0].Landing)
	body, ok := h.file("greet.txt")
	require.True(t, ok)
	require.Equal(t, "hello\n", body)
}

// An approved review lands the work itself.
func TestLoop_ReviewApproves(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "ok", WriteArea: []string{"ok.txt"}, Review: engine.ReviewRequired,
		Brief: "@write ok.txt fine\n@commit ok\n@done"})
	h.until("it lands", func() bool { return h.mission(m.ID).Landing == engine.LandingLanded })
	repairs, err := h.eng.ListMissions(h.ctx, engine.MissionFilter{SubjectID: m.ID, Kind: engine.KindRepair})
	require.NoError(t, err)
	require.Empty(t, repairs)
}

// Two missions that both change the same file without a declared overlap conflict at landing;
// the second gets a repair mission that merges the target in and resolves the conflict.
func TestLoop_LandingConflictIsRepaired(t *testing.T) {
	h := newHarness(t)
	first := h.create(engine.MissionSpec{Title: "first", WriteArea: []string{"first/**"},
		Brief: "@write shared.txt \"line one\\nfirst\\n\"\n@commit first\n@done"})
	second := h.create(engine.MissionSpec{Title: "second", WriteArea: []string{"second/**"},
		Brief: "@sleep 300ms\n@write shared.txt \"line one\\nsecond\\n\"\n@commit second\n@done"})
	h.until("both land", func() bool {
		return h.mission(first.ID).Landing == engine.LandingLanded && h.mission(second.ID).Landing == engine.LandingLanded
	})
	body, _ := h.file("shared.txt")
	require.Contains(t, body, "first")
	require.Contains(t, body, "second")
	repairs, err := h.eng.ListMissions(h.ctx, engine.MissionFilter{Kind: engine.KindRepair})
	require.NoError(t, err)
	require.Len(t, repairs, 1)
	d, err := h.eng.GetMission(h.ctx, repairs[0].SubjectID)
	require.NoError(t, err)
	require.Equal(t, "conflicted", d.Landings[0].Status)
	require.Equal(t, []string{"shared.txt"}, d.Landings[0].ConflictPaths)
}
