package scheduler_test

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// review: required runs a reviewer on a snapshot before landing; a minor verdict creates a
// repair mission whose landing carries the work.
func TestLoop_ReviewAsksForRepair(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "greeting", WriteArea: []string{"greet.txt"}, Review: engine.ReviewRequired,
		Brief: "@write greet.txt \"helo\\n\"\n@commit greeting\n@done\n" +
			"@review verdict minor \"typo: helo\"\n" +
			"@repair write greet.txt \"hello\\n\"\n@repair commit fix typo\n@repair done fixed"})
	h.until("the work lands through its repair", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })
	reviews, err := h.eng.ListMissions(h.ctx, engine.MissionFilter{SubjectID: m.ID, Kind: domain.KindReview})
	require.NoError(t, err)
	require.Len(t, reviews, 1)
	require.Equal(t, "minor", reviews[0].Result.Verdict)
	repairs, err := h.eng.ListMissions(h.ctx, engine.MissionFilter{SubjectID: m.ID, Kind: domain.KindRepair})
	require.NoError(t, err)
	require.Len(t, repairs, 1)
	require.Equal(t, domain.LandingLanded, repairs[0].Landing)
	body, ok := h.file("greet.txt")
	require.True(t, ok)
	require.Equal(t, "hello\n", body)
}

// An approved review lands the work itself.
func TestLoop_ReviewApproves(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "ok", WriteArea: []string{"ok.txt"}, Review: engine.ReviewRequired,
		Brief: "@write ok.txt fine\n@commit ok\n@done"})
	h.until("it lands", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })
	repairs, err := h.eng.ListMissions(h.ctx, engine.MissionFilter{SubjectID: m.ID, Kind: domain.KindRepair})
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
		return h.mission(first.ID).Landing == domain.LandingLanded && h.mission(second.ID).Landing == domain.LandingLanded
	})
	body, _ := h.file("shared.txt")
	require.Contains(t, body, "first")
	require.Contains(t, body, "second")
	repairs, err := h.eng.ListMissions(h.ctx, engine.MissionFilter{Kind: domain.KindRepair})
	require.NoError(t, err)
	require.Len(t, repairs, 1)
	d, err := h.eng.GetMission(h.ctx, repairs[0].SubjectID)
	require.NoError(t, err)
	require.Equal(t, "conflicted", d.Landings[0].Status)
	require.Equal(t, []string{"shared.txt"}, d.Landings[0].ConflictPaths)
}

// Failing checks make a repair mission; when the repair of that repair still fails them, the
// chain stops there (it would never end otherwise) with an escalation for the Main Agent
// carrying the check output, and the voyage blocks. What the landing waits for and the
// voyage's report say the checks failed, naming the check, not that the work conflicts.
func TestLoop_FailingChecksRepairChainIsBounded(t *testing.T) {
	test, err := exec.LookPath("test")
	require.NoError(t, err)
	h := newHarness(t, func(e *engine.Options, c *scheduler.Config) {
		c.Repositories = []scheduler.RepoPolicy{{Path: e.DefaultRepository, Checks: [][]string{{test, "!", "-e", "broken.txt"}}}}
	})
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{{Key: "b", Title: "breaks the check",
		WriteArea: []string{"broken.txt"}, Brief: "@write broken.txt broken\n@commit break\n@done"}}}, "test")
	require.NoError(t, err)
	h.until("the voyage blocks", func() bool { return h.voyageState(d.Voyage.ID) == domain.VoyageBlocked })
	repairs, err := h.eng.ListMissions(h.ctx, engine.MissionFilter{Kind: domain.KindRepair})
	require.NoError(t, err)
	require.Len(t, repairs, 2, h.dump())
	first, second := repairs[0], repairs[1]
	require.Equal(t, d.IDs["b"], first.SubjectID)
	require.Equal(t, first.ID, second.SubjectID)
	require.Equal(t, domain.LandingRepair, h.mission(first.ID).Landing)
	last, err := h.eng.GetMission(h.ctx, second.ID)
	require.NoError(t, err)
	require.Equal(t, domain.LandingConflicted, last.Mission.Landing)
	require.Equal(t, domain.LandingRecordChecksFailed, last.Landings[0].Status, "the status the table's row for failed checks is told by")
	escs, err := h.eng.Escalations(h.ctx, engine.EscalationFilter{State: domain.EscalationOpen, MissionID: second.ID})
	require.NoError(t, err)
	kinds := map[string]domain.Escalation{}
	for _, e := range escs {
		kinds[e.Kind] = e
	}
	require.Len(t, kinds, 2, "the chain's escalation and the blocked voyage's report")
	require.Contains(t, kinds["checks"].Reason, "after 2 repair missions")
	require.Contains(t, kinds["checks"].Evidence[0], "check `"+test+" ! -e broken.txt` failed")
	check := "the repository's checks failed on the merged tree (`" + test + " ! -e broken.txt`), after repair missions: a decision is needed"
	require.Contains(t, kinds["report"].Evidence[0], "landing waits: "+check, "failed checks are not called a conflict")
	require.NotContains(t, kinds["report"].Evidence[0], "conflict")
	require.Len(t, last.WhyNotRunning, 1)
	require.Equal(t, domain.LandWaitConflicted, last.WhyNotRunning[0].Code)
	require.Contains(t, last.WhyNotRunning[0].Message, check)
	_, landed := h.file("broken.txt")
	require.False(t, landed)
}
