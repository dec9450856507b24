package tools

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// StatusResult is status's answer: the engine's status with every state counted (zeros
// included) and a sentence about the scheduler loop.
type StatusResult struct {
	engine.Status
	// Total is the number of missions.
	Total int `json:"total"`
	// Loop says whether a scheduler loop runs and what it does ("leading: <phase>", or idle).
	Loop string `json:"loop"`
}

// NoArgs is the argument object of tools that take none.
type NoArgs struct{}

// statusOf reads the status (counters kept with the missions, never a count of rows).
func statusOf(ctx context.Context, e *engine.Engine) (StatusResult, error) {
	s, err := e.Status(ctx)
	if err != nil {
		return StatusResult{}, err
	}
	out := StatusResult{Status: s}
	if out.Counts == nil {
		out.Counts = map[engine.MissionState]int{}
	}
	for _, st := range engine.AllStates() {
		out.Counts[st] += 0
		out.Total += out.Counts[st]
	}
	l := s.Leader
	switch {
	case l.Owner == "" || !l.ExpiresAt.After(e.Now()):
		out.Loop = "idle: no scheduler loop is running, so managed agents are not launched; pull-mode agents can still claim missions"
	case l.Phase != "":
		out.Loop = fmt.Sprintf("leading (%s, epoch %d): %s", l.Owner, l.Epoch, l.Phase)
	default:
		out.Loop = fmt.Sprintf("leading (%s, epoch %d)", l.Owner, l.Epoch)
	}
	if s.Paused {
		out.Loop += "; paused: nothing new starts until resume_scheduler"
	}
	return out, nil
}

// Status is the status tool.
func Status(d *Deps) Tool {
	return newTool(toolSpec{
		name: "status", title: "Scheduler status", group: GroupScheduler, effect: ReadOnly,
		description: "The scheduler at a glance: missions per state, whether it is paused, what the scheduler loop is doing, active voyages, the number of open escalations and the known agents. Cheap: call it as often as needed.",
		input:       inputSchema[NoArgs](), output: outputSchema[StatusResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, _ NoArgs) (StatusResult, error) {
			return statusOf(ctx, d.Engine)
		}),
	})
}

// AgentList is list_agents' result.
type AgentList struct {
	Agents []engine.Agent `json:"agents"`
}

// ListAgents is the list_agents tool.
func ListAgents(d *Deps) Tool {
	return newTool(toolSpec{
		name: "list_agents", title: "List agents", group: GroupScheduler, effect: ReadOnly,
		description: "The workers the scheduler knows: managed agent profiles it launches and external agents that claimed missions in pull mode, with their capabilities, personas, when they were last seen and how many missions each holds now.",
		input:       inputSchema[NoArgs](), output: outputSchema[AgentList](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, _ NoArgs) (AgentList, error) {
			agents, err := d.Engine.Agents(ctx)
			if err != nil {
				return AgentList{}, err
			}
			held, err := leasesByOwner(ctx, d.Engine)
			if err != nil {
				return AgentList{}, err
			}
			for i := range agents {
				if n, ok := held[agents[i].ID]; ok {
					agents[i].Running = n
				}
			}
			if agents == nil {
				agents = []engine.Agent{}
			}
			return AgentList{Agents: agents}, nil
		}),
	})
}

// leasesByOwner counts leased and running missions per lease owner.
func leasesByOwner(ctx context.Context, e *engine.Engine) (map[string]int, error) {
	out := map[string]int{}
	cursor := ""
	for {
		ms, err := e.ListMissions(ctx, engine.MissionFilter{States: []engine.MissionState{engine.StateLeased, engine.StateRunning},
			Cursor: cursor, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			out[m.Lease.Owner]++
		}
		if len(ms) < 1000 {
			return out, nil
		}
		cursor = ms[len(ms)-1].ID
	}
}

// PauseArgs are pause_scheduler's and resume_scheduler's arguments.
type PauseArgs struct {
	Reason string `json:"reason,omitempty" jsonschema:"why, for the event log"`
}

// PausedResult says whether the scheduler is paused after the call.
type PausedResult struct {
	Paused bool `json:"paused"`
}

// PauseScheduler is the pause_scheduler tool.
func PauseScheduler(d *Deps) Tool {
	return pauseTool(d, true)
}

// ResumeScheduler is the resume_scheduler tool.
func ResumeScheduler(d *Deps) Tool {
	return pauseTool(d, false)
}

func pauseTool(d *Deps, pause bool) Tool {
	s := toolSpec{name: "resume_scheduler", title: "Resume the scheduler", group: GroupScheduler, effect: Additive, idempotent: true,
		description: "Let the scheduler start new missions again after pause_scheduler. Returns paused=false."}
	if pause {
		s.name, s.title = "pause_scheduler", "Pause the scheduler"
		s.description = "Stop starting new missions (no new leases, no pull-mode claims) until resume_scheduler. Running missions go on and can still complete. Returns paused=true."
	}
	s.input, s.output = inputSchema[PauseArgs](), outputSchema[PausedResult]()
	s.handler = handle(func(ctx context.Context, _ mcp.CallToolRequest, a PauseArgs) (PausedResult, error) {
		if err := d.Engine.SetPaused(ctx, pause, a.Reason, actor(ctx)); err != nil {
			return PausedResult{}, err
		}
		p, err := d.Engine.Paused(ctx)
		return PausedResult{Paused: p}, err
	})
	return newTool(s)
}
