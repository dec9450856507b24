package engine

import (
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// landsNothing says why a completed mission has nothing to land, from the mission alone ("" when
// its work lands): Complete sets such a mission's landing to not_required, and LandingWhy
// tells why in the same words.
func landsNothing(m *domain.Mission) string {
	switch {
	case m.Kind == domain.KindReview:
		return "a review mission: its verdict is its result, it changes no files"
	case m.Workspace == WorkspaceSnapshot:
		return "it ran in a read-only snapshot (workspace snapshot): it commits nothing"
	case m.Workspace == WorkspaceMain:
		return "it worked in the repository's own checkout (workspace main): its changes are there already"
	}
	return ""
}

// LandingWhy says why a mission's landing is not_required ("" in any other landing state):
// what the mission is (a review, a snapshot or main workspace), else what its attempt's
// landing found (the attempt changed no files, or had no writable workspace). landings are
// the mission's landing records (MissionDetail.Landings).
func LandingWhy(m domain.Mission, landings []domain.Landing) string {
	if m.Landing != domain.LandingNotRequired {
		return ""
	}
	if why := landsNothing(&m); why != "" {
		return why
	}
	for i := len(landings) - 1; i >= 0; i-- {
		l := landings[i]
		if l.Attempt != m.Attempt || l.Status != string(worktree.LandNothingToLand) {
			continue
		}
		if l.Detail != "" {
			return "nothing to land: " + l.Detail
		}
		return "nothing to land: the attempt changed no files"
	}
	return "nothing to land"
}
