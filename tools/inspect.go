package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// errNoWorkspaces is the server fault of a deployment without a workspace service.
var errNoWorkspaces = errors.New("workspaces are not configured on this server (no worktree manager wired)")

// GetMissionLogArgs are get_mission_log's arguments.
type GetMissionLogArgs struct {
	MissionID string `json:"mission_id" jsonschema:"the mission"`
	Attempt   int    `json:"attempt,omitempty" jsonschema:"which attempt (1 is the first); default: the latest" minimum:"1"`
	TailBytes int    `json:"tail_bytes,omitempty" jsonschema:"how much of the end of each output file to return, 1 to 1048576 bytes (default 65536)" minimum:"1" maximum:"1048576"`
}

// MissionLog is get_mission_log's answer.
type MissionLog struct {
	MissionID string              `json:"mission_id"`
	Attempt   int                 `json:"attempt"`
	State     domain.MissionState `json:"state"`
	// Output is the tail of the agent's stdout and stderr (managed agents only; absent for
	// pull-mode attempts, whose agent reports through tools).
	Output *AttemptLog `json:"output,omitempty"`
	// Events are the attempt's recorded events (progress, checkpoints, failure, result),
	// the last 200 at most.
	Events []domain.Event `json:"events"`
}

const maxLogEvents = 200

// GetMissionLog is the get_mission_log tool.
func GetMissionLog(d *Deps) Tool {
	return newTool(toolSpec{
		name: "get_mission_log", title: "Read a mission's log", group: GroupMissions, effect: ReadOnly,
		description: "What one attempt of a mission did: the end of its agent's output (stdout and stderr, secrets redacted) and the attempt's events — progress messages, checkpoints, the failure or the result. Default: the latest attempt.",
		input:       inputSchema[GetMissionLogArgs](), output: outputSchema[MissionLog](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a GetMissionLogArgs) (MissionLog, error) {
			return missionLog(ctx, d, a)
		}),
	})
}

func missionLog(ctx context.Context, d *Deps, a GetMissionLogArgs) (MissionLog, error) {
	tail := a.TailBytes
	if tail == 0 {
		tail = 64 << 10
	}
	if tail < 1 || tail > 1<<20 {
		return MissionLog{}, fieldError("tail_bytes", fmt.Sprintf("%d is out of range", tail), "give 1 to 1048576")
	}
	if a.Attempt < 0 {
		return MissionLog{}, fieldError("attempt", "is negative", "attempts count from 1; omit it for the latest")
	}
	det, err := d.Engine.GetMission(ctx, a.MissionID)
	if err != nil {
		return MissionLog{}, err
	}
	m := det.Mission
	n := a.Attempt
	if n == 0 {
		n = m.Attempt
	}
	if n > m.Attempt {
		return MissionLog{}, fieldError("attempt", fmt.Sprintf("mission %s has had %d attempt(s)", m.ID, m.Attempt), "omit attempt for the latest")
	}
	out := MissionLog{MissionID: m.ID, Attempt: n, State: m.State, Events: []domain.Event{}}
	if n == 0 {
		return out, nil // never ran: nothing to show yet
	}
	if d.Logs != nil {
		l, err := d.Logs.AttemptLog(ctx, m, n, tail)
		switch {
		case err == nil:
			out.Output = &l
		case errors.Is(err, ErrNoLog):
		default:
			return out, err
		}
	}
	out.Events, err = attemptEvents(ctx, d.Engine, m.ID, n)
	return out, err
}

// attemptEvents returns the last maxLogEvents events of one attempt of a mission.
func attemptEvents(ctx context.Context, e *engine.Engine, missionID string, attempt int) ([]domain.Event, error) {
	out := []domain.Event{}
	after := int64(0)
	for {
		evs, err := e.Events(ctx, engine.EventFilter{AfterSeq: after, MissionID: missionID, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, ev := range evs {
			if ev.Attempt == attempt {
				out = append(out, ev)
			}
		}
		if len(out) > maxLogEvents {
			out = out[len(out)-maxLogEvents:]
		}
		if len(evs) < 1000 {
			return out, nil
		}
		after = evs[len(evs)-1].Seq
	}
}

// DiffResult is get_mission_diff's answer.
type DiffResult struct {
	MissionID string `json:"mission_id"`
	Attempt   int    `json:"attempt"`
	Diff
}

// GetMissionDiff is the get_mission_diff tool.
func GetMissionDiff(d *Deps) Tool {
	return newTool(toolSpec{
		name: "get_mission_diff", title: "Show a mission's changes", group: GroupMissions, effect: ReadOnly,
		description: "What the mission's latest attempt changed on its branch, compared with the commit its workspace started from: the changed files (renames detected) and a unified diff (cut at 4 MiB). Uncommitted changes in the workspace are flagged, not shown.",
		input:       inputSchema[MissionIDArgs](), output: outputSchema[DiffResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a MissionIDArgs) (DiffResult, error) {
			if d.Workspaces == nil {
				return DiffResult{}, errNoWorkspaces
			}
			det, err := d.Engine.GetMission(ctx, a.MissionID)
			if err != nil {
				return DiffResult{}, err
			}
			m := det.Mission
			diff, err := d.Workspaces.Diff(ctx, m)
			if errors.Is(err, ErrNoWorkspace) {
				return DiffResult{}, &callerError{msg: fmt.Sprintf("mission %s is %s and has no workspace to compare yet (it gets one when an attempt starts)", m.ID, m.State)}
			}
			if err != nil {
				return DiffResult{}, err
			}
			if diff.Files == nil {
				diff.Files = []DiffFile{}
			}
			return DiffResult{MissionID: m.ID, Attempt: m.Attempt, Diff: diff}, nil
		}),
	})
}
