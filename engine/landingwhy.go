package engine

import (
	"context"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// lastLanding is m's landing record of its current attempt when what its landing waits for
// depends on the record (domain.LandingState.ToldByRecord: a conflicted landing whose checks
// failed), else nil without reading.
func lastLanding(ctx context.Context, r Reader, m *domain.Mission) (*domain.Landing, error) {
	if !m.Landing.ToldByRecord() {
		return nil, nil
	}
	ls, err := r.LandingList(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	for i := range ls {
		if ls[i].Attempt == m.Attempt {
			return &ls[i], nil
		}
	}
	return nil, nil
}

// landingWait is what m's landing waits for (the table in engine/domain/landingwait.go), told
// by its landing record when that decides it; false when it waits for nothing.
func landingWait(ctx context.Context, r Reader, m *domain.Mission) (domain.LandingWait, bool, error) {
	last, err := lastLanding(ctx, r, m)
	if err != nil {
		return domain.LandingWait{}, false, err
	}
	w, ok := m.Landing.WaitAfter(last)
	return w, ok, nil
}

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
