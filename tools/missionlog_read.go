package tools

import (
	"context"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// ReadMissionLog reads what get_mission_log answers — the tail of one attempt's agent output
// (when logs is not nil and the attempt left files) and the attempt's events, the last 200 —
// for views outside MCP (mcp-scheduler watch). The arguments and their errors are
// get_mission_log's: a *domain.FieldError naming tail_bytes or attempt, a not-found error for
// an unknown mission.
func ReadMissionLog(ctx context.Context, e *engine.Engine, logs Logs, a GetMissionLogArgs) (MissionLog, error) {
	return missionLog(ctx, &Deps{Engine: e, Logs: logs}, a)
}
