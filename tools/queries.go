package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// GetMission is the get_mission tool.
func GetMission(d *Deps) Tool {
	return newTool(toolSpec{
		name: "get_mission", title: "Show a mission", group: GroupMissions, effect: ReadOnly,
		description: "Everything about one mission: its fields and state, dependencies and dependents, every attempt with its outcome, the workspace each attempt worked in (path, branch, base commit, active or removed, and notes on what it holds differently from the repository's checkout: Git LFS files left as pointers, submodules left empty and why), landings, the open escalation that blocks it, and — when it waits — why_not_running, the list of reasons it is not running yet, each with a code and a sentence (hard_dependency, serialization, conflict, repository_busy, backoff, paused, slots, resources, waiting_for_agent, no_agent, budget, requirements, rate_limited, no_leader, queued); for a completed mission whose landing is not done, what the landing waits for (landing_queued, landing_target_busy, landing_review, landing_checkout, landing_approval, landing_repair, landing_conflicted, landing_left).",
		input:       inputSchema[MissionIDArgs](), output: outputSchema[engine.MissionDetail](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a MissionIDArgs) (engine.MissionDetail, error) {
			return d.Engine.GetMission(ctx, a.MissionID)
		}),
	})
}

// ListMissionsArgs filter and page list_missions.
type ListMissionsArgs struct {
	States     []string `json:"states,omitempty" jsonschema:"only missions in these states" enum:"pending|leased|running|interrupted|completed|failed|blocked|cancelled"`
	VoyageID   string   `json:"voyage_id,omitempty" jsonschema:"only missions of this voyage"`
	Repository string   `json:"repository,omitempty" jsonschema:"only missions of this repository (absolute path, or a remote repository's name, as stored)"`
	Persona    string   `json:"persona,omitempty" jsonschema:"only missions for this persona"`
	Kind       string   `json:"kind,omitempty" jsonschema:"only missions of this kind" enum:"work|review|repair|debug|verify|architect"`
	ParentID   string   `json:"parent_id,omitempty" jsonschema:"only child missions of this mission"`
	Cursor     string   `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Limit      int      `json:"limit,omitempty" jsonschema:"missions per page, 1 to 500 (default 50)" minimum:"1" maximum:"500"`
}

// MissionItem is one mission in a listing.
type MissionItem struct {
	ID         string              `json:"id"`
	Title      string              `json:"title"`
	State      domain.MissionState `json:"state"`
	Priority   int                 `json:"priority"`
	Kind       domain.MissionKind  `json:"kind"`
	VoyageID   string              `json:"voyage_id,omitempty"`
	Key        string              `json:"key,omitempty"`
	Persona    string              `json:"persona,omitempty"`
	Repository string              `json:"repository"`
	// TargetBranch is the branch the mission lands on; empty: the repository's default.
	TargetBranch string              `json:"target_branch,omitempty" jsonschema:"branch the work lands on; empty: the repository's default"`
	Attempt      int                 `json:"attempt"`
	Owner        string              `json:"owner,omitempty" jsonschema:"the agent holding the lease, while leased or running"`
	Landing      domain.LandingState `json:"landing"`
	UpdatedAt    time.Time           `json:"updated_at"`
}

// MissionList is list_missions' result.
type MissionList struct {
	Missions []MissionItem `json:"missions"`
	// NextCursor is set when more missions may follow: pass it as cursor.
	NextCursor string `json:"next_cursor,omitempty"`
}

func itemOf(m domain.Mission) MissionItem {
	it := MissionItem{ID: m.ID, Title: m.Title, State: m.State, Priority: m.Priority, Kind: m.Kind,
		VoyageID: m.VoyageID, Key: m.Key, Persona: m.Persona, Repository: m.Repository, TargetBranch: m.TargetBranch,
		Attempt: m.Attempt, Landing: m.Landing, UpdatedAt: m.UpdatedAt}
	if m.State.Leased() {
		it.Owner = m.Lease.Owner
	}
	return it
}

// ListMissions is the list_missions tool.
func ListMissions(d *Deps) Tool {
	return newTool(toolSpec{
		name: "list_missions", title: "List missions", group: GroupMissions, effect: ReadOnly,
		description: "Page through missions, oldest first, optionally filtered by state, voyage, repository, persona, kind or parent. Each line has the id, title, state, priority and lease owner; get_mission shows one in full.",
		input:       inputSchema[ListMissionsArgs](), output: outputSchema[MissionList](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a ListMissionsArgs) (MissionList, error) {
			limit, err := pageLimit(a.Limit, 50, 500)
			if err != nil {
				return MissionList{}, err
			}
			f := engine.MissionFilter{VoyageID: a.VoyageID, Repository: a.Repository, Persona: a.Persona,
				Kind: domain.MissionKind(a.Kind), ParentID: a.ParentID, Cursor: a.Cursor, Limit: limit}
			for _, s := range a.States {
				f.States = append(f.States, domain.MissionState(s))
			}
			ms, err := d.Engine.ListMissions(ctx, f)
			if err != nil {
				return MissionList{}, err
			}
			out := MissionList{Missions: make([]MissionItem, 0, len(ms))}
			for _, m := range ms {
				out.Missions = append(out.Missions, itemOf(m))
			}
			if len(ms) == limit {
				out.NextCursor = ms[len(ms)-1].ID
			}
			return out, nil
		}),
	})
}

// VoyageIDArgs name one voyage.
type VoyageIDArgs struct {
	VoyageID string `json:"voyage_id" jsonschema:"the voyage id (vyg_…)"`
}

// VoyageStatus is the voyage_status tool.
func VoyageStatus(d *Deps) Tool {
	return newTool(toolSpec{
		name: "voyage_status", title: "Show a voyage", group: GroupMissions, effect: ReadOnly,
		description: "A voyage at a glance: its state (open, active, completed, blocked, cancelled), the count of missions per state, each mission with its state, landing and — when it waits — why, and the voyage's open escalations.",
		input:       inputSchema[VoyageIDArgs](), output: outputSchema[engine.VoyageDetail](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a VoyageIDArgs) (engine.VoyageDetail, error) {
			return d.Engine.VoyageStatus(ctx, a.VoyageID)
		}),
	})
}

// GetEventsArgs select events.
type GetEventsArgs struct {
	AfterSeq  int64    `json:"after_seq,omitempty" jsonschema:"only events after this sequence number (the last seq you saw); 0 = from the start" minimum:"0"`
	MissionID string   `json:"mission_id,omitempty" jsonschema:"only events of this mission"`
	VoyageID  string   `json:"voyage_id,omitempty" jsonschema:"only events of this voyage"`
	Types     []string `json:"types,omitempty" jsonschema:"only these event types, e.g. mission.created, lease.acquired, mission.completed, mission.failed, escalation.raised"`
	Limit     int      `json:"limit,omitempty" jsonschema:"at most this many events, 1 to 1000 (default 100)" minimum:"1" maximum:"1000"`
}

// EventList is get_events' result.
type EventList struct {
	Events []domain.Event `json:"events"`
	// LastSeq is the sequence number to pass as after_seq next time.
	LastSeq int64 `json:"last_seq"`
}

// GetEvents is the get_events tool.
func GetEvents(d *Deps) Tool {
	return newTool(toolSpec{
		name: "get_events", title: "Read the event log", group: GroupScheduler, effect: ReadOnly,
		description: "The append-only log of state changes in sequence order (mission.created, lease.acquired, attempt.started, mission.completed, mission.failed, landing.*, escalation.*, voyage.*), each with its time, actor and details. Pass last_seq back as after_seq to read only what is new.",
		input:       inputSchema[GetEventsArgs](), output: outputSchema[EventList](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a GetEventsArgs) (EventList, error) {
			limit, err := pageLimit(a.Limit, 100, 1000)
			if err != nil {
				return EventList{}, err
			}
			if a.AfterSeq < 0 {
				return EventList{}, fieldError("after_seq", "is negative", "give 0, or the last_seq of the previous page")
			}
			if a.MissionID != "" && !domain.ValidID(domain.PrefixMission, a.MissionID) {
				return EventList{}, fieldError("mission_id", "is not a mission id", "ids look like msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D")
			}
			if a.VoyageID != "" && !domain.ValidID(domain.PrefixVoyage, a.VoyageID) {
				return EventList{}, fieldError("voyage_id", "is not a voyage id", "ids look like vyg_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D")
			}
			evs, err := d.Engine.Events(ctx, engine.EventFilter{AfterSeq: a.AfterSeq, MissionID: a.MissionID,
				VoyageID: a.VoyageID, Types: a.Types, Limit: limit})
			if err != nil {
				return EventList{}, err
			}
			out := EventList{Events: evs, LastSeq: a.AfterSeq}
			if out.Events == nil {
				out.Events = []domain.Event{}
			}
			if n := len(evs); n > 0 {
				out.LastSeq = evs[n-1].Seq
			}
			return out, nil
		}),
	})
}

// pageLimit is a listing's limit argument: 0 takes def; anything outside 1..most is a caller
// error naming the field.
func pageLimit(limit, def, most int) (int, error) {
	if limit == 0 {
		return def, nil
	}
	if limit < 1 || limit > most {
		return 0, fieldError("limit", "is out of range", fmt.Sprintf("give 1 to %d", most))
	}
	return limit, nil
}
