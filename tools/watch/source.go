package watch

import (
	"context"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// Source is what the view reads and the one thing it changes. EngineSource is the real one;
// the model only ever calls it from commands (never from Update or View), so Update and View
// stay pure.
type Source interface {
	// Snapshot reads the overview.
	Snapshot(ctx context.Context) (Snapshot, error)
	// Mission reads one mission for the detail view.
	Mission(ctx context.Context, id string) (MissionView, error)
	// Log reads the latest attempt's log of a mission (get_mission_log's answer).
	Log(ctx context.Context, id string) (tools.MissionLog, error)
	// Resolve closes an open escalation with an action (retry, skip, cancel, acknowledge):
	// the engine operation resolve_escalation and `mcp-scheduler escalations resolve` call,
	// with their rules and their errors.
	Resolve(ctx context.Context, escalationID, action string) (domain.Escalation, error)
}

// MissionView is the detail view's data: get_mission's answer and the mission's open
// escalations (with their evidence).
type MissionView struct {
	Detail      engine.MissionDetail
	Escalations []domain.Escalation
}

// EngineSource reads through the engine's read operations and resolves through
// Engine.ResolveEscalation.
type EngineSource struct {
	Engine *engine.Engine
	// Logs reads agent output files (tools.FileLogs); nil shows the events only.
	Logs tools.Logs
	// Actor names the person in the event log ("cli:alice"), as the CLI does.
	Actor string
}

// Snapshot implements Source.
func (s EngineSource) Snapshot(ctx context.Context) (Snapshot, error) { return Load(ctx, s.Engine) }

// Mission implements Source.
func (s EngineSource) Mission(ctx context.Context, id string) (MissionView, error) {
	d, err := s.Engine.GetMission(ctx, id)
	if err != nil {
		return MissionView{}, err
	}
	es, err := s.Engine.Escalations(ctx, engine.EscalationFilter{State: domain.EscalationOpen, MissionID: id, Limit: 20})
	return MissionView{Detail: d, Escalations: es}, err
}

// logTail is how much of each output file the log view reads (bytes).
const logTail = 32 << 10

// Log implements Source.
func (s EngineSource) Log(ctx context.Context, id string) (tools.MissionLog, error) {
	return tools.ReadMissionLog(ctx, s.Engine, s.Logs, tools.GetMissionLogArgs{MissionID: id, TailBytes: logTail})
}

// Resolve implements Source.
func (s EngineSource) Resolve(ctx context.Context, escalationID, action string) (domain.Escalation, error) {
	return s.Engine.ResolveEscalation(ctx, escalationID, action, "", s.Actor)
}
