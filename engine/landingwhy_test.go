package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Every not_required landing says why: what the mission is, or what its landing found.
func TestLandingWhy_SaysWhyNothingLands(t *testing.T) {
	notReq := func(m domain.Mission) domain.Mission { m.Landing, m.Attempt = domain.LandingNotRequired, 2; return m }
	empty := []domain.Landing{{Attempt: 1, Status: "conflicted"}, {Attempt: 2, Status: "nothing_to_land"}}
	noWorkspace := []domain.Landing{{Attempt: 2, Status: "nothing_to_land", Detail: "the attempt had no writable workspace"}}
	for _, c := range []struct {
		m        domain.Mission
		landings []domain.Landing
		want     string
	}{
		{notReq(domain.Mission{Kind: domain.KindReview, Workspace: WorkspaceWorktree}), nil, "a review mission: its verdict is its result, it changes no files"},
		{notReq(domain.Mission{Kind: domain.KindWork, Workspace: WorkspaceSnapshot}), nil, "it ran in a read-only snapshot (workspace snapshot): it commits nothing"},
		{notReq(domain.Mission{Kind: domain.KindWork, Workspace: WorkspaceMain}), nil, "it worked in the repository's own checkout (workspace main): its changes are there already"},
		{notReq(domain.Mission{Kind: domain.KindWork, Workspace: WorkspaceWorktree}), empty, "nothing to land: the attempt changed no files"},
		{notReq(domain.Mission{Kind: domain.KindWork, Workspace: WorkspaceWorktree}), noWorkspace, "nothing to land: the attempt had no writable workspace"},
		{domain.Mission{Kind: domain.KindReview, Landing: domain.LandingLanded}, nil, ""},
		{domain.Mission{Kind: domain.KindWork, Landing: domain.LandingPending}, nil, ""},
	} {
		require.Equal(t, c.want, LandingWhy(c.m, c.landings), "%+v", c.m)
	}
	// The rule Complete applies and the reason told are one: a mission lands nothing by
	// itself exactly when LandingWhy names what it is.
	for _, m := range []domain.Mission{{Kind: domain.KindReview}, {Workspace: WorkspaceSnapshot}, {Workspace: WorkspaceMain}, {Workspace: WorkspaceWorktree, Kind: domain.KindWork}} {
		require.Equal(t, landsNothing(&m) != "", LandingWhy(notReq(m), nil) != "nothing to land", "%+v", m)
	}
}
