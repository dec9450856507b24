package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// EscalateArgs are escalate's arguments.
type EscalateArgs struct {
	Reason           string   `json:"reason" jsonschema:"what blocks the work, in one or two sentences"`
	DecisionRequired string   `json:"decision_required" jsonschema:"the question someone must answer, with the options"`
	Route            string   `json:"route,omitempty" jsonschema:"who must decide: main_agent (default), architect, person or debugger" enum:"main_agent|architect|person|debugger"`
	MissionIDs       []string `json:"mission_ids,omitempty" jsonschema:"the missions concerned" maxItems:"500"`
	VoyageID         string   `json:"voyage_id,omitempty" jsonschema:"the voyage concerned"`
	Kind             string   `json:"kind,omitempty" jsonschema:"a short category, e.g. decision, environment, conflict (default report)"`
	Evidence         []string `json:"evidence,omitempty" jsonschema:"facts behind it: error messages, commands, paths, one per entry" maxItems:"64"`
	SafeNextStep     string   `json:"safe_next_step,omitempty" jsonschema:"what can be done now without making things worse"`
}

// EscalationResult is the answer of tools that raise or resolve one escalation.
type EscalationResult struct {
	Escalation domain.Escalation `json:"escalation"`
}

// Escalate is the escalate tool.
func Escalate(d *Deps) Tool {
	return newTool(toolSpec{
		name: "escalate", title: "Raise an escalation", group: GroupEscalations, effect: Additive,
		description: "Record a blocker report for whoever must decide (the Main Agent, an architect, a person or a debugger) without stopping any mission: reason, decision required, evidence and a safe next step. To stop a mission until the decision is made, use block_mission instead. The escalation_report prompt helps write one.",
		input:       inputSchema[EscalateArgs](), output: outputSchema[EscalationResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a EscalateArgs) (EscalationResult, error) {
			esc, err := d.Engine.Escalate(ctx, engine.EscalationSpec{MissionIDs: a.MissionIDs, VoyageID: a.VoyageID,
				Route: domain.Route(a.Route), Kind: a.Kind, Reason: a.Reason, DecisionRequired: a.DecisionRequired,
				Evidence: a.Evidence, SafeNextStep: a.SafeNextStep}, actor(ctx))
			return EscalationResult{Escalation: esc}, err
		}),
	})
}

// BlockMissionArgs are block_mission's arguments.
type BlockMissionArgs struct {
	MissionID        string   `json:"mission_id" jsonschema:"the mission to block"`
	Epoch            *int64   `json:"epoch,omitempty" jsonschema:"your lease epoch, when you are the agent working on it (pull mode); omit when you are the Main Agent or a person"`
	Reason           string   `json:"reason" jsonschema:"what blocks the mission"`
	DecisionRequired string   `json:"decision_required" jsonschema:"the question someone must answer before it can go on"`
	Route            string   `json:"route,omitempty" jsonschema:"who must decide (default main_agent)" enum:"main_agent|architect|person|debugger"`
	Kind             string   `json:"kind,omitempty" jsonschema:"a short category (default decision)"`
	Evidence         []string `json:"evidence,omitempty" jsonschema:"facts behind it, one per entry" maxItems:"64"`
	SafeNextStep     string   `json:"safe_next_step,omitempty" jsonschema:"what can be done now without making things worse"`
}

// BlockMission is the block_mission tool.
func BlockMission(d *Deps) Tool {
	return newTool(toolSpec{
		name: "block_mission", title: "Block a mission for a decision", group: GroupMissions, effect: Destructive,
		description: "Stop a mission until someone decides: it moves to blocked with an escalation saying what must be decided. A running attempt ends (its agent is stopped). An agent blocking its own mission passes its epoch. resolve_escalation (retry, skip, cancel) or retry_mission moves it on. Returns the escalation.",
		input:       inputSchema[BlockMissionArgs](), output: outputSchema[EscalationResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a BlockMissionArgs) (EscalationResult, error) {
			esc, err := d.Engine.Block(ctx, engine.BlockRequest{MissionID: a.MissionID, Epoch: a.Epoch,
				Route: domain.Route(a.Route), Kind: a.Kind, Reason: a.Reason, DecisionRequired: a.DecisionRequired,
				Evidence: a.Evidence, SafeNextStep: a.SafeNextStep}, actor(ctx))
			return EscalationResult{Escalation: esc}, err
		}),
	})
}

// ListEscalationsArgs filter list_escalations.
type ListEscalationsArgs struct {
	State     string `json:"state,omitempty" jsonschema:"open (default), resolved or all" enum:"open|resolved|all"`
	VoyageID  string `json:"voyage_id,omitempty" jsonschema:"only escalations of this voyage"`
	MissionID string `json:"mission_id,omitempty" jsonschema:"only escalations naming this mission"`
	Route     string `json:"route,omitempty" jsonschema:"only escalations for this decider" enum:"main_agent|architect|person|debugger"`
	Limit     int    `json:"limit,omitempty" jsonschema:"at most this many, 1 to 500 (default 100)" minimum:"1" maximum:"500"`
}

// EscalationList is list_escalations' result.
type EscalationList struct {
	Escalations []domain.Escalation `json:"escalations"`
}

// ListEscalations is the list_escalations tool.
func ListEscalations(d *Deps) Tool {
	return newTool(toolSpec{
		name: "list_escalations", title: "List escalations", group: GroupEscalations, effect: ReadOnly,
		description: "The blocker reports waiting for a decision (or resolved ones): which missions they block, the reason, the decision required, evidence, a safe next step and who must decide. Decide with resolve_escalation.",
		input:       inputSchema[ListEscalationsArgs](), output: outputSchema[EscalationList](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a ListEscalationsArgs) (EscalationList, error) {
			limit, err := pageLimit(a.Limit, 100, 500)
			if err != nil {
				return EscalationList{}, err
			}
			f := engine.EscalationFilter{State: a.State, VoyageID: a.VoyageID, MissionID: a.MissionID,
				Route: domain.Route(a.Route), Limit: limit}
			switch a.State {
			case "":
				f.State = domain.EscalationOpen
			case "all":
				f.State = ""
			case domain.EscalationOpen, domain.EscalationResolved:
			default:
				return EscalationList{}, fieldError("state", "is not open, resolved or all", "")
			}
			escs, err := d.Engine.Escalations(ctx, f)
			if escs == nil {
				escs = []domain.Escalation{}
			}
			return EscalationList{Escalations: escs}, err
		}),
	})
}

// ResolveEscalationArgs are resolve_escalation's arguments.
type ResolveEscalationArgs struct {
	EscalationID string `json:"escalation_id" jsonschema:"the escalation (esc_…)"`
	Action       string `json:"action" jsonschema:"retry: the blocked missions go back to pending; skip: they are given up (cancelled, marked skipped); cancel: they are cancelled; acknowledge: close the report and leave them as they are" enum:"retry|skip|cancel|acknowledge"`
	Note         string `json:"note,omitempty" jsonschema:"the decision and why, for the record"`
}

// ResolveEscalation is the resolve_escalation tool.
func ResolveEscalation(d *Deps) Tool {
	return newTool(toolSpec{
		name: "resolve_escalation", title: "Decide an escalation", group: GroupEscalations, effect: Destructive,
		description: "Close an open escalation with a decision and apply it to the missions it blocked: retry, skip, cancel or acknowledge. A blocked voyage goes back to active when something can run again. Returns the resolved escalation.",
		input:       inputSchema[ResolveEscalationArgs](), output: outputSchema[EscalationResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a ResolveEscalationArgs) (EscalationResult, error) {
			esc, err := d.Engine.ResolveEscalation(ctx, a.EscalationID, a.Action, a.Note, actor(ctx))
			return EscalationResult{Escalation: esc}, err
		}),
	})
}
