package engine

import (
	"context"
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// LandingQueueLimit is how many missions of the landing queue one planning step reads
// (oldest first); the next step reads the rest. It also bounds the landings waiting for
// approval and for a repair that one step reads.
const LandingQueueLimit = 400

// LandingView is what the landing part of a planning step reads of the store (the planner
// turns it into its LandingSnapshot): the completed missions whose landing the landing
// service works on, the ones that wait for approval or a repair, and each one's review rounds
// and repair missions.
type LandingView struct {
	// Queue is the landing queue (Reader.MissionsLandingQueue), oldest first.
	Queue []domain.Mission
	// Awaiting are the completed missions whose landing waits for approve_landing or for a
	// repair mission, oldest first.
	Awaiting []domain.Mission
	// Reviews are the review missions about each queued mission whose review is required
	// and not yet approved, by subject id.
	Reviews map[string][]domain.Mission
	// Repairs are the repair missions about each mission whose landing is repair, by
	// subject id.
	Repairs map[string][]domain.Mission
}

// LandingView reads the landing part of a planning step in one read transaction (the
// landing service's own pass; the planning tick reads it inside PlanningView).
func (e *Engine) LandingView(ctx context.Context) (LandingView, error) {
	var v LandingView
	err := e.view(ctx, func(r Reader) error {
		var err error
		v, err = readLanding(ctx, r)
		return err
	})
	return v, err
}

// readLanding reads a LandingView with r. Errors name what was being read.
func readLanding(ctx context.Context, r Reader) (LandingView, error) {
	v := LandingView{Reviews: map[string][]domain.Mission{}, Repairs: map[string][]domain.Mission{}}
	var err error
	if v.Queue, err = r.MissionsLandingQueue(ctx, LandingQueueLimit); err != nil {
		return v, fmt.Errorf("landing queue: %w", err)
	}
	if v.Awaiting, err = r.MissionsLandingAwaiting(ctx, LandingQueueLimit); err != nil {
		return v, fmt.Errorf("landings awaiting approval or a repair: %w", err)
	}
	for i := range v.Queue {
		m := &v.Queue[i]
		if !ReviewPending(m) {
			continue
		}
		if v.Reviews[m.ID], err = r.MissionList(ctx, MissionFilter{SubjectID: m.ID, Kind: domain.KindReview, Limit: 100}); err != nil {
			return v, fmt.Errorf("review rounds of %s: %w", m.ID, err)
		}
	}
	for i := range v.Awaiting {
		m := &v.Awaiting[i]
		if m.Landing != domain.LandingRepair {
			continue
		}
		if v.Repairs[m.ID], err = r.MissionList(ctx, MissionFilter{SubjectID: m.ID, Kind: domain.KindRepair, Limit: 100}); err != nil {
			return v, fmt.Errorf("repair missions of %s: %w", m.ID, err)
		}
	}
	return v, nil
}

// ReviewPending reports whether a completed mission's landing goes through its review gate
// first: its review is required, it is not itself a review, and its landing was not approved.
func ReviewPending(m *domain.Mission) bool {
	return m.Review == ReviewRequired && m.Kind != domain.KindReview && m.Landing != domain.LandingApproved
}

// LandingReasons says why completed mission id's landing is not done, as get_mission's
// why_not_running says it (the landing wait the planner recorded, else the one its landing
// state implies: queued, waiting for its review, for approval, …); nil when it is not a
// completed mission whose landing waits. Explain gives the runnable rules instead, which for
// a completed mission only say that it is completed.
func (e *Engine) LandingReasons(ctx context.Context, id string) ([]Reason, error) {
	var out []Reason
	err := e.view(ctx, func(r Reader) error {
		m, err := r.MissionGet(ctx, id)
		if err != nil || m.State != domain.StateCompleted || m.Landing.Satisfies() {
			return err
		}
		out, err = landingWhy(ctx, r, &m)
		return err
	})
	return out, err
}
