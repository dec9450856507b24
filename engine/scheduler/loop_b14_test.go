package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// TestB14_UpstreamFailsForGood (shared/cases B14) at loop level: A fails for good (its retry
// budget spent by real failing agents), B depends on A and C on B. The loop leaves neither
// pending forever: B and C are blocked with a reason naming A, the voyage settles as blocked
// (not idle, not active) with an escalation; retrying A reopens B and C and, with a fixed
// brief, the voyage completes with all three landed once.
func TestB14_UpstreamFailsForGood(t *testing.T) {
	h := newHarness(t)
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "b14", Missions: []engine.MissionSpec{
		{Key: "a", Title: "upstream", WriteArea: []string{"a.txt"}, RetryBudget: ptr(1), Brief: "@fail test \"TestA is broken\""},
		{Key: "b", Title: "middle", WriteArea: []string{"b.txt"}, DependsOn: []string{"a"},
			Brief: "@write b.txt \"b\\n\"\n@commit b14 b\n@done"},
		{Key: "c", Title: "last", WriteArea: []string{"c.txt"}, DependsOn: []string{"b"},
			Brief: "@write c.txt \"c\\n\"\n@commit b14 c\n@done"},
		{Key: "x", Title: "independent", WriteArea: []string{"x.txt"}, Brief: "@write x.txt \"x\\n\"\n@commit b14 x\n@done"},
	}}, "test")
	require.NoError(t, err)
	a, b, c := d.IDs["a"], d.IDs["b"], d.IDs["c"]
	h.until("the voyage blocks", func() bool { return h.voyageState(d.Voyage.ID) == domain.VoyageBlocked })
	require.Equal(t, domain.StateFailed, h.mission(a).State)
	require.Len(t, h.attempts(a), 2, "A ran out of its budget of one retry")
	for _, id := range []string{b, c} {
		det, err := h.eng.GetMission(h.ctx, id)
		require.NoError(t, err)
		require.Equal(t, domain.StateBlocked, det.Mission.State, "%s is blocked, not pending forever", id)
		require.Empty(t, det.Attempts, "never ran")
		require.NotNil(t, det.Escalation, "%s says why", id)
	}
	bd, err := h.eng.GetMission(h.ctx, b)
	require.NoError(t, err)
	require.Contains(t, bd.Escalation.Reason+" "+bd.Escalation.DecisionRequired, a, "the reason names the failed upstream")
	require.Equal(t, domain.LandingLanded, h.mission(d.IDs["x"]).Landing, "independent work went on")
	vs, err := h.eng.VoyageStatus(h.ctx, d.Voyage.ID)
	require.NoError(t, err)
	require.NotEmpty(t, vs.Escalations, "the blocked voyage reports what must be decided")

	// Retry A (no tick runs in between: the harness ticks only in until), then fix its brief.
	_, err = h.eng.Retry(h.ctx, a, "test")
	require.NoError(t, err)
	for _, id := range []string{b, c} {
		require.Equal(t, domain.StatePending, h.mission(id).State, "retrying A reopens %s", id)
	}
	fixed := "@write a.txt \"a\\n\"\n@commit b14 a\n@done"
	_, err = h.eng.UpdateMission(h.ctx, a, engine.MissionPatch{Brief: &fixed}, "test")
	require.NoError(t, err)
	h.until("the voyage completes", func() bool { return h.voyageState(d.Voyage.ID) == domain.VoyageCompleted })
	log := git(t, h.repo, "log", "--format=%s", "main")
	for _, k := range []string{"a", "b", "c", "x"} {
		require.Equal(t, 1, countLines(log, "b14 "+k), k)
	}
}

func (h *harness) attempts(id string) []domain.Attempt {
	h.t.Helper()
	d, err := h.eng.GetMission(h.ctx, id)
	require.NoError(h.t, err)
	return d.Attempts
}
