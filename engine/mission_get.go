package engine

import (
	"context"
	"errors"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Mission reads one mission without its details (dependencies, attempts, landings: see
// GetMission), for callers that only need to know it exists or read its own fields (the
// MCP preflight of resources/read and prompts/get). Errors: domain.ErrInvalid for an id
// that is not a mission id, a *domain.NotFoundError (domain.ErrNotFound) when none has it.
func (e *Engine) Mission(ctx context.Context, id string) (domain.Mission, error) {
	if err := domain.CheckID("mission_id", domain.PrefixMission, id); err != nil {
		return domain.Mission{}, err
	}
	m, err := viewValue(ctx, e, func(r Reader) (domain.Mission, error) { return r.MissionGet(ctx, id) })
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Mission{}, &domain.NotFoundError{Kind: "mission", ID: id}
	}
	return m, err
}
