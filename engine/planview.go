package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"time"
)

// PlanningView is what one planning step reads of the store, all from one read transaction,
// so that the planner decides on one consistent state (engine/planner turns it into its
// Snapshot).
type PlanningView struct {
	// Candidates are the pending and interrupted missions in pick order (at most the wave
	// size), whatever their dependencies.
	Candidates []domain.Mission
	// Edges are each candidate's edges for the runnable rule (Blockers), by mission id; a
	// candidate that is not in a runnable state has none.
	Edges map[string]Edges
	// Paused is the scheduler's pause flag.
	Paused bool
	// Live is every leased or running mission, by id.
	Live []domain.Mission
	// Voyages are the candidates' voyages, by id.
	Voyages map[string]domain.Voyage
	// Subjects are the missions the review candidates review, by id (a subject that no
	// longer exists is absent).
	Subjects map[string]domain.Mission
	// Holds are the holds the last planning step recorded, by mission id.
	Holds map[string]Hold
	// Outcomes is the attempt history per profile and persona.
	Outcomes []OutcomeCount
	// Agents are the agents seen at or after the time asked for, most recent first.
	Agents []domain.Agent
	// Landing is what the landing part of the plan decides on (the landing queue, the
	// landings that wait for approval or a repair, review rounds and repairs).
	Landing LandingView
	// RateWindows are the limit groups' stored rate-limit windows, by group.
	RateWindows map[string]RateWindow
	// TokenLimits are the token limits (input plus output tokens) of the candidates that
	// have one and already spent tokens, by mission id (VoyageHold's tokens).
	TokenLimits map[string]int64
}

// PlanningView reads, in one read transaction, up to limit candidates in pick order with
// everything the planner needs to decide about them, the agents seen at or after
// agentsSince, and the landing part (LandingView). Errors are the store's, naming what was being read.
func (e *Engine) PlanningView(ctx context.Context, limit int, agentsSince time.Time) (PlanningView, error) {
	var v PlanningView
	err := e.view(ctx, func(r Reader) error {
		var err error
		v = PlanningView{Edges: map[string]Edges{}, Voyages: map[string]domain.Voyage{}, Subjects: map[string]domain.Mission{},
			TokenLimits: map[string]int64{}}
		if v.Candidates, err = r.MissionsRunnableOrder(ctx, limit); err != nil {
			return fmt.Errorf("runnable missions: %w", err)
		}
		if v.Paused, v.Live, err = pausedAndLive(ctx, r); err != nil {
			return fmt.Errorf("pause flag and live missions: %w", err)
		}
		for i := range v.Candidates {
			if err := v.readCandidate(ctx, r, &v.Candidates[i]); err != nil {
				return err
			}
		}
		if v.Landing, err = readLanding(ctx, r); err != nil {
			return err
		}
		return v.readShared(ctx, r, agentsSince)
	})
	return v, err
}

// readCandidate reads one candidate's edges, voyage, review subject and token limit.
func (v *PlanningView) readCandidate(ctx context.Context, r Reader, m *domain.Mission) error {
	tokens, err := missionTokenLimit(ctx, r, m)
	if err != nil {
		return fmt.Errorf("token limit of %s: %w", m.ID, err)
	}
	if tokens > 0 {
		v.TokenLimits[m.ID] = tokens
	}
	if m.State.Runnable() {
		edges, err := ReadEdges(ctx, r, m.ID)
		if err != nil {
			return fmt.Errorf("edges of %s: %w", m.ID, err)
		}
		v.Edges[m.ID] = edges
	}
	if _, ok := v.Voyages[m.VoyageID]; m.VoyageID != "" && !ok {
		vo, err := r.VoyageGet(ctx, m.VoyageID)
		if err != nil {
			return fmt.Errorf("voyage %s of %s: %w", m.VoyageID, m.ID, err)
		}
		v.Voyages[m.VoyageID] = vo
	}
	if _, ok := v.Subjects[m.SubjectID]; m.Kind == domain.KindReview && m.SubjectID != "" && !ok {
		u, err := r.MissionGet(ctx, m.SubjectID)
		switch {
		case errors.Is(err, domain.ErrNotFound): // pruned: the reviewer has no model to avoid
		case err != nil:
			return fmt.Errorf("subject %s of review %s: %w", m.SubjectID, m.ID, err)
		default:
			v.Subjects[u.ID] = u
		}
	}
	return nil
}

// readShared reads what does not depend on the candidates: holds, outcomes and agents.
func (v *PlanningView) readShared(ctx context.Context, r Reader, agentsSince time.Time) error {
	hs, err := r.HoldList(ctx)
	if err != nil {
		return fmt.Errorf("holds: %w", err)
	}
	v.Holds = make(map[string]Hold, len(hs))
	for _, h := range hs {
		v.Holds[h.MissionID] = h
	}
	if v.Outcomes, err = r.AttemptOutcomes(ctx); err != nil {
		return fmt.Errorf("attempt outcomes: %w", err)
	}
	if v.Agents, err = r.AgentsSeenSince(ctx, agentsSince); err != nil {
		return fmt.Errorf("agents: %w", err)
	}
	ws, err := r.RateWindowList(ctx)
	if err != nil {
		return fmt.Errorf("rate windows: %w", err)
	}
	v.RateWindows = make(map[string]RateWindow, len(ws))
	for _, w := range ws {
		v.RateWindows[w.Group] = w
	}
	return nil
}
