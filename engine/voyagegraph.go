package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// VoyageGraph is a voyage as a graph: its status (missions with state, landing and why they
// wait, as VoyageStatus gives them) and every dependency edge that starts at one of its
// missions, read in a second transaction right after (a change in between shows at the next
// read: every change is announced on the hub). Edges may point at missions outside the
// voyage (dispatch accepts ids of existing missions). Scheduler-made conflict edges (Source
// domain.SourceScheduler) are the ones inferred from overlapping write areas.
type VoyageGraph struct {
	VoyageDetail
	Edges []domain.Dependency `json:"edges"`
	// Subjects link each mission made about another (a review, repair, verify or debug
	// mission) to the mission it is about.
	Subjects []SubjectEdge `json:"subjects"`
	// EndedConflicts are the conflict edges the store no longer holds: a conflict edge is
	// deleted when one of its missions finishes (its write area is released), and its
	// conflict.dropped event is what is left. They come from the voyage's events, so history
	// retention (prune_history) removes them with the events; an event written before the
	// event carried source and reason gives a conflict with neither.
	EndedConflicts []domain.Dependency `json:"ended_conflicts"`
}

// SubjectEdge is a mission (MissionID, of kind Kind) made about SubjectID.
type SubjectEdge struct {
	MissionID string             `json:"mission_id"`
	SubjectID string             `json:"subject_id"`
	Kind      domain.MissionKind `json:"kind"`
}

// maxEndedConflicts bounds the conflict.dropped events a graph reads (the oldest first).
const maxEndedConflicts = 500

// VoyageGraph reads voyage id with its edges (the dashboard's voyage page). Errors: a
// FieldError for a malformed id, a NotFoundError for an unknown voyage, store errors.
func (e *Engine) VoyageGraph(ctx context.Context, id string) (VoyageGraph, error) {
	var g VoyageGraph
	d, err := e.VoyageStatus(ctx, id)
	if err != nil {
		return g, err
	}
	g.VoyageDetail = d
	err = e.view(ctx, func(r Reader) error {
		ms, err := r.VoyageMissions(ctx, id)
		if errors.Is(err, domain.ErrNotFound) {
			return &domain.NotFoundError{Kind: "voyage", ID: id}
		}
		if err != nil {
			return err
		}
		g.Edges, g.Subjects = make([]domain.Dependency, 0, len(ms)), []SubjectEdge{}
		for _, m := range ms {
			deps, err := r.DependenciesOf(ctx, m.ID)
			if err != nil {
				return err
			}
			g.Edges = append(g.Edges, deps...)
			if m.SubjectID != "" {
				g.Subjects = append(g.Subjects, SubjectEdge{MissionID: m.ID, SubjectID: m.SubjectID, Kind: m.Kind})
			}
		}
		g.EndedConflicts, err = endedConflicts(ctx, r, id, g.Edges)
		return err
	})
	return g, err
}

// endedConflicts reads the conflict edges of voyage id that were dropped (conflict.dropped
// events, the first maxEndedConflicts), one per pair of missions and none where a conflict
// edge of the pair is still in live.
func endedConflicts(ctx context.Context, r Reader, id string, live []domain.Dependency) ([]domain.Dependency, error) {
	evs, err := r.EventList(ctx, EventFilter{VoyageID: id, Types: []string{"conflict.dropped"}, Limit: maxEndedConflicts})
	if err != nil {
		return nil, err
	}
	out := []domain.Dependency{}
	seen := map[[2]string]bool{}
	for _, d := range live {
		if d.Type == domain.EdgeConflict {
			seen[[2]string{min(d.MissionID, d.DependsOn), max(d.MissionID, d.DependsOn)}] = true
		}
	}
	for _, ev := range evs {
		var data struct{ With, Source, Reason string }
		if err := json.Unmarshal(ev.Data, &data); err != nil || data.With == "" {
			continue // not one this code wrote: nothing to draw
		}
		pair := [2]string{min(ev.MissionID, data.With), max(ev.MissionID, data.With)}
		if seen[pair] {
			continue
		}
		seen[pair] = true
		out = append(out, domain.Dependency{MissionID: ev.MissionID, DependsOn: data.With, Type: domain.EdgeConflict,
			Source: data.Source, Reason: data.Reason, CreatedAt: ev.At})
	}
	return out, nil
}
