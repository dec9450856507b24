package engine

import (
	"context"
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
}

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
		g.Edges = make([]domain.Dependency, 0, len(ms))
		for _, m := range ms {
			deps, err := r.DependenciesOf(ctx, m.ID)
			if err != nil {
				return err
			}
			g.Edges = append(g.Edges, deps...)
		}
		return nil
	})
	return g, err
}
