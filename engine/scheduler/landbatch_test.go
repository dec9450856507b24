package scheduler_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// Missions of one branch whose landings are ready together land in one pass: the branch
// moves once, each mission keeps its own merge commit, and one that conflicts with the rest
// of the batch is left out (conflicted) without holding the others back.
func TestLoop_ReadyLandingsLandTogether(t *testing.T) {
	h := newHarness(t, func(e *engine.Options, c *scheduler.Config) {
		// block, not repair: a repair agent would go on writing to the repository after the test
		// (agents outlive a stopped scheduler by design), racing the removal of its directory
		c.Repositories = []scheduler.RepoPolicy{{Path: e.DefaultRepository, Landing: scheduler.LandingApproval, OnConflict: scheduler.OnConflictBlock}}
	})
	specs := []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a.txt"}, Brief: "@write a.txt \"a\\n\"\n@commit a\n@done a"},
		{Key: "b", Title: "b", WriteArea: []string{"b.txt"}, Brief: "@write b.txt \"b\\n\"\n@commit b\n@done b"},
		{Key: "c", Title: "c", WriteArea: []string{"c.txt"}, Brief: "@write c.txt \"c\\n\"\n@commit c\n@done c"},
		{Key: "d", Title: "d", WriteArea: []string{"d/**"}, Brief: "@write a.txt \"d's a\\n\"\n@commit d\n@done d"},
	}
	d, err := h.eng.Dispatch(h.ctx, engine.VoyageSpec{Title: "v", Missions: specs}, "test")
	require.NoError(t, err)
	keys := []string{"a", "b", "c", "d"}
	h.until("all four wait for approval", func() bool {
		for _, k := range keys {
			if h.mission(d.IDs[k]).Landing != domain.LandingApproval {
				return false
			}
		}
		return true
	})
	before := strings.TrimSpace(git(t, h.repo, "rev-parse", "main"))
	for _, k := range keys {
		_, err := h.eng.ApproveLanding(h.ctx, d.IDs[k], "ok", "test")
		require.NoError(t, err)
	}
	h.until("a, b and c land; d is conflicted", func() bool {
		return h.mission(d.IDs["a"]).Landing == domain.LandingLanded && h.mission(d.IDs["b"]).Landing == domain.LandingLanded &&
			h.mission(d.IDs["c"]).Landing == domain.LandingLanded && h.mission(d.IDs["d"]).Landing == domain.LandingConflicted
	})
	after := map[string]bool{}
	for _, k := range []string{"a", "b", "c"} {
		got, err := h.eng.GetMission(h.ctx, d.IDs[k])
		require.NoError(t, err)
		l := got.Landings[len(got.Landings)-1]
		require.Equal(t, before, l.OldTarget, k)
		require.Equal(t, "main", l.TargetBranch, "the repository's default, named")
		after[l.NewTarget] = true
	}
	require.Len(t, after, 1, "one move of the branch for the three")
	reflog := git(t, h.repo, "reflog", "show", "--format=%H", "main")
	require.Len(t, strings.Fields(reflog), 2, "the creation of main and one landing:\n%s", reflog)
	conflict, err := h.eng.GetMission(h.ctx, d.IDs["d"])
	require.NoError(t, err)
	require.Equal(t, "conflicted", conflict.Landings[0].Status)
	require.Equal(t, []string{"a.txt"}, conflict.Landings[0].ConflictPaths)
	for _, f := range []string{"a", "b", "c"} {
		body, ok := h.file(f + ".txt")
		require.True(t, ok)
		require.Equal(t, f+"\n", body)
	}
}
