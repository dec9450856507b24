package tools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// StatusResult is status's answer: a glance, small enough to poll often and cheap in a
// model's context. Details are one call away: voyage_status, list_escalations, list_agents.
type StatusResult struct {
	// Counts is the number of missions per state, every state present (zeros included).
	Counts map[domain.MissionState]int `json:"counts"`
	// Total is the number of missions.
	Total int `json:"total"`
	// Paused is true while nothing new starts (pause_scheduler).
	Paused bool `json:"paused"`
	// Loop is "idle" when no scheduler loop runs (managed agents are not launched; pull-mode
	// agents can still claim), else "leading" with the leader's phase.
	Loop string `json:"loop"`
	// Leader is the process running the loop, when one does.
	Leader *engine.Leader `json:"leader,omitempty"`
	// Voyages counts the unfinished voyages by state (open: nothing started yet; active;
	// blocked: waiting for a decision).
	Voyages map[domain.VoyageState]int `json:"voyages"`
	// ActiveVoyages are the most recent voyages in flight or waiting for a decision (active
	// or blocked), at most 5; voyage_status shows one in full.
	ActiveVoyages []VoyageItem `json:"active_voyages"`
	// OpenEscalations is the number of escalations waiting for a decision.
	OpenEscalations int `json:"open_escalations"`
	// Agents is the number of agents the scheduler knows (list_agents shows them).
	Agents int `json:"agents"`
	// Waiting counts the waiting missions by the reason the scheduler's planner holds them
	// back (reason codes as in get_mission's why_not_running: hard_dependency, conflict,
	// slots, resources, waiting_for_agent, no_agent, paused, budget …). While no loop leads
	// it counts every pending and interrupted mission under no_leader.
	Waiting map[string]int `json:"waiting"`
	// Stalled lists the running missions whose agent has written nothing past its profile's
	// stall_threshold (get_mission's progress says for how long, and when it will be
	// stopped); absent when none is.
	Stalled []string `json:"stalled,omitempty"`
	// Nodes are the scheduler nodes of a cluster (several scheduler processes sharing one
	// PostgreSQL store), by name; absent on a single node.
	Nodes []NodeItem `json:"nodes,omitempty"`
	// LandingLocks are the live landing locks: a node landing onto a target (repository:branch)
	// holds one, so that the cluster lands there one node at a time; absent when none is held.
	LandingLocks []LandingLockItem `json:"landing_locks,omitempty"`
}

// LandingLockItem is one live landing lock in status.
type LandingLockItem struct {
	Target    string    `json:"target"` // repository:branch ("" branch: the repository's default)
	Node      string    `json:"node"`   // the node landing there
	ExpiresAt time.Time `json:"expires_at"`
}

// NodeItem is one scheduler node of a cluster in status.
type NodeItem struct {
	Name string `json:"name"`
	// Live: its process renews its node lease (ExpiresAt is ahead); a node that is not live
	// runs nothing, and the leader reaps its missions' leases as they expire.
	Live      bool      `json:"live"`
	Owner     string    `json:"owner"` // the process running it (host:pid:random)
	Since     time.Time `json:"since"`
	ExpiresAt time.Time `json:"expires_at"`
	Phase     string    `json:"phase,omitempty"`
}

// VoyageItem is a voyage in a listing (voyage_status shows one in full).
type VoyageItem struct {
	ID    string             `json:"id"`
	Title string             `json:"title"`
	State domain.VoyageState `json:"state"`
}

// maxStatusVoyages bounds the recent voyages status lists.
const maxStatusVoyages = 5

// NoArgs is the argument object of tools that take none.
type NoArgs struct{}

// ReadStatus reads the status the status tool shows (mission counts come from counters kept
// with the missions, never from counting rows). The command line prints the same.
func ReadStatus(ctx context.Context, e *engine.Engine) (StatusResult, error) {
	s, err := e.Summary(ctx, maxStatusVoyages)
	if err != nil {
		return StatusResult{}, err
	}
	out := StatusResult{Counts: map[domain.MissionState]int{}, Paused: s.Paused, Voyages: map[domain.VoyageState]int{},
		ActiveVoyages: []VoyageItem{}, OpenEscalations: s.OpenEscalations, Agents: s.Agents, Loop: "idle"}
	for _, st := range domain.AllStates() {
		out.Counts[st] = s.Counts[st]
		out.Total += s.Counts[st]
	}
	for _, st := range []domain.VoyageState{domain.VoyageOpen, domain.VoyageActive, domain.VoyageBlocked} {
		out.Voyages[st] = s.Voyages[st]
	}
	out.Waiting = s.Waiting
	for _, v := range s.RecentVoyages {
		out.ActiveVoyages = append(out.ActiveVoyages, VoyageItem{ID: v.ID, Title: v.Title, State: v.State})
	}
	if l := s.Leader; l.Owner != "" && l.ExpiresAt.After(e.Now()) {
		out.Leader = &l
		out.Loop = "leading"
		if l.Phase != "" {
			out.Loop += ": " + l.Phase
		}
	} else if n := out.Counts[domain.StatePending] + out.Counts[domain.StateInterrupted]; n > 0 {
		out.Waiting = map[string]int{engine.WhyNoLeader: n}
	}
	if out.Waiting == nil {
		out.Waiting = map[string]int{}
	}
	now := e.Now()
	for _, n := range s.Nodes {
		out.Nodes = append(out.Nodes, NodeItem{Name: n.Name, Live: n.Live(now), Owner: n.Owner, Since: n.Since,
			ExpiresAt: n.ExpiresAt, Phase: n.Phase})
	}
	if out.Stalled, err = e.StalledMissions(ctx); err != nil {
		return StatusResult{}, err
	}
	locks, err := e.LandingLocks(ctx)
	if err != nil {
		return StatusResult{}, err
	}
	for _, l := range locks {
		out.LandingLocks = append(out.LandingLocks, LandingLockItem{Target: l.Target, Node: l.Node, ExpiresAt: l.ExpiresAt})
	}
	return out, nil
}

// Status is the status tool.
func Status(d *Deps) Tool {
	return newTool(toolSpec{
		name: "status", title: "Scheduler status", group: GroupScheduler, effect: ReadOnly,
		description: "The scheduler at a glance: missions per state, whether it is paused, whether a scheduler loop runs (idle: managed agents are not launched, pull-mode agents can still claim), how many voyages are open, active or blocked with the most recent in flight, how many escalations wait for a decision, how many agents are known, and how many waiting missions are held back for each reason (waiting: resources, slots, waiting_for_agent, hard_dependency …; get_mission says which and why). Cheap: call it as often as needed; voyage_status, list_escalations and list_agents give the details.",
		input:       inputSchema[NoArgs](), output: outputSchema[StatusResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, _ NoArgs) (json.RawMessage, error) {
			return d.status.get(ctx, d.Engine)
		}),
	})
}

// AgentList is list_agents' result.
type AgentList struct {
	Agents []domain.Agent `json:"agents"`
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
				agents = []domain.Agent{}
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
		ms, err := e.ListMissions(ctx, engine.MissionFilter{States: []domain.MissionState{domain.StateLeased, domain.StateRunning},
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
