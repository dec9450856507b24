package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// MissionInput is a mission as a caller describes it (create_mission, and each mission of a
// dispatch). Every field but title is optional.
type MissionInput struct {
	Title              string          `json:"title" jsonschema:"a short title (at most 200 characters); put the details in brief" maxLength:"200"`
	Brief              string          `json:"brief,omitempty" jsonschema:"the prompt the agent receives: what to do, how, and what done means (default: the title)"`
	Repository         string          `json:"repository,omitempty" jsonschema:"absolute path of the git repository to work on, or the name of a configured remote repository; default: the repository the server runs in. Only configured repositories are accepted"`
	TargetBranch       string          `json:"target_branch,omitempty" jsonschema:"branch the work lands on; default: the repository's checked-out branch"`
	Priority           int             `json:"priority,omitempty" jsonschema:"1 (urgent, may preempt) to 1000; default 100. Lower runs first" minimum:"1" maximum:"1000"`
	Persona            string          `json:"persona,omitempty" jsonschema:"kind of agent that should do it, e.g. implementer, reviewer, debugger (lower-case letters, digits, _ and -)"`
	Capabilities       []string        `json:"capabilities,omitempty" jsonschema:"what the agent must be able to do, e.g. go, python, docs; every one must be offered by the agent" maxItems:"64"`
	WriteArea          []string        `json:"write_area,omitempty" jsonschema:"glob patterns relative to the repository root of the files this mission may change, e.g. internal/auth/**; missions with disjoint write areas run in parallel, a mission without one runs alone in its repository" maxItems:"64"`
	Workspace          string          `json:"workspace,omitempty" jsonschema:"where the agent works: worktree (default, its own branch), snapshot (read-only copy of a commit), main (the repository's own checkout, read-only) or isolated_copy" enum:"worktree|snapshot|main|isolated_copy"`
	Review             string          `json:"review,omitempty" jsonschema:"required: a reviewer checks the work before it lands; default none" enum:"none|required"`
	AcceptanceCriteria []string        `json:"acceptance_criteria,omitempty" jsonschema:"checkable statements that are true when the mission is done" maxItems:"64"`
	Deadline           string          `json:"deadline,omitempty" jsonschema:"RFC 3339 time by which it should be done; a missed deadline raises an escalation"`
	RetryBudget        *int            `json:"retry_budget,omitempty" jsonschema:"failed attempts allowed before the mission fails (0 to 20, default 3)" minimum:"0" maximum:"20"`
	CostLimitUSD       float64         `json:"cost_limit_usd,omitempty" jsonschema:"stop and escalate when the mission's attempts cost more than this many US dollars; 0 = no limit" minimum:"0"`
	TokenLimit         int64           `json:"token_limit,omitempty" jsonschema:"stop and escalate when the mission's attempts used this many tokens (input, cached included, plus output); 0 = no limit" minimum:"0"`
	ModelPolicy        *ModelPolicyArg `json:"model_policy,omitempty" jsonschema:"which model runs it; default: the agent profile's choice"`
	DependsOn          []string        `json:"depends_on,omitempty" jsonschema:"missions that must complete and land first (hard dependencies): mission ids, or in dispatch also keys of the same dispatch" maxItems:"500"`
}

// ModelPolicyArg says who picks the model.
type ModelPolicyArg struct {
	Mode    string   `json:"mode,omitempty" jsonschema:"scheduler_forced runs exactly model; agent_select lets the agent choose among allowed" enum:"scheduler_forced|agent_select"`
	Model   string   `json:"model,omitempty" jsonschema:"the model to run (scheduler_forced)"`
	Allowed []string `json:"allowed,omitempty" jsonschema:"models the agent may choose from (agent_select)"`
}

// spec converts the input into the engine's spec; path prefixes field names in errors
// (e.g. "missions[2].").
func (in MissionInput) spec(path string) (engine.MissionSpec, error) {
	s := engine.MissionSpec{Title: in.Title, Brief: in.Brief, Repository: in.Repository,
		TargetBranch: in.TargetBranch, Priority: in.Priority, Persona: in.Persona,
		Capabilities: in.Capabilities, WriteArea: in.WriteArea, Workspace: in.Workspace,
		Review: in.Review, AcceptanceCriteria: in.AcceptanceCriteria, RetryBudget: in.RetryBudget,
		CostLimitUSD: in.CostLimitUSD, TokenLimit: in.TokenLimit, DependsOn: in.DependsOn}
	if err := checkPatterns(path+"write_area", in.WriteArea); err != nil {
		return s, err
	}
	if in.ModelPolicy != nil {
		s.ModelPolicy = domain.ModelPolicy{Mode: in.ModelPolicy.Mode, Model: in.ModelPolicy.Model, Allowed: in.ModelPolicy.Allowed}
	}
	if in.Deadline != "" {
		d, err := parseTime(path+"deadline", in.Deadline)
		if err != nil {
			return s, err
		}
		s.Deadline = d
	}
	return s, nil
}

// checkPatterns refuses write-area globs with control characters (a NUL cannot be part of
// any path); the engine checks the rest of the glob syntax.
func checkPatterns(field string, patterns []string) error {
	for i, p := range patterns {
		if hasControl(p) {
			return fieldError(fmt.Sprintf("%s[%d]", field, i), "contains control characters", "give a glob such as internal/auth/**")
		}
	}
	return nil
}

func parseTime(field, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, fieldError(field, fmt.Sprintf("%q is not an RFC 3339 time", clip(v, 60)), "write it like 2026-12-01T17:00:00Z")
	}
	return t, nil
}

// CreateMissionArgs are create_mission's arguments.
type CreateMissionArgs struct {
	MissionInput
	VoyageID       string `json:"voyage_id,omitempty" jsonschema:"add the mission to this open voyage"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"makes the call safe to repeat: a second call with the same key returns the first mission instead of creating another"`
}

// CreatedMission is create_mission's result.
type CreatedMission struct {
	Mission domain.Mission `json:"mission"`
	// Created is false when the idempotency key named an existing mission.
	Created bool `json:"created"`
}

// CreateMission is the create_mission tool.
func CreateMission(d *Deps) Tool {
	return newTool(toolSpec{
		name: "create_mission", title: "Create a mission", group: GroupMissions, effect: Additive,
		description: "Queue one unit of work for a coding agent. The scheduler gives each attempt its own git worktree and branch, runs it when its dependencies have landed and a slot is free, retries failures within the retry budget, and lands the result on the target branch. " +
			"Returns the mission (state pending). For several related missions use dispatch instead, which creates them atomically with their dependency edges.",
		input: inputSchema[CreateMissionArgs](), output: outputSchema[CreatedMission](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a CreateMissionArgs) (CreatedMission, error) {
			spec, err := a.spec("")
			if err != nil {
				return CreatedMission{}, err
			}
			spec.VoyageID, spec.IdempotencyKey = a.VoyageID, a.IdempotencyKey
			if spec.RetryBudget == nil {
				spec.RetryBudget = d.DefaultRetryBudget
			}
			c, err := d.Engine.CreateMission(ctx, spec, actor(ctx))
			return CreatedMission{Mission: c.Mission, Created: c.Created}, err
		}),
	})
}

// UpdateMissionArgs are update_mission's arguments: nil fields stay as they are.
type UpdateMissionArgs struct {
	MissionID          string          `json:"mission_id" jsonschema:"the mission to change"`
	Priority           *int            `json:"priority,omitempty" jsonschema:"1 (urgent) to 1000" minimum:"1" maximum:"1000"`
	Deadline           *string         `json:"deadline,omitempty" jsonschema:"RFC 3339 time, or an empty string to remove the deadline"`
	RetryBudget        *int            `json:"retry_budget,omitempty" jsonschema:"0 to 20" minimum:"0" maximum:"20"`
	CostLimitUSD       *float64        `json:"cost_limit_usd,omitempty" jsonschema:"US dollars; 0 = no limit" minimum:"0"`
	TokenLimit         *int64          `json:"token_limit,omitempty" jsonschema:"tokens (input, cached included, plus output); 0 = no limit" minimum:"0"`
	Title              *string         `json:"title,omitempty" jsonschema:"only while nobody works on the mission" maxLength:"200"`
	Brief              *string         `json:"brief,omitempty" jsonschema:"only while nobody works on the mission"`
	Persona            *string         `json:"persona,omitempty" jsonschema:"only while nobody works on the mission"`
	Capabilities       *[]string       `json:"capabilities,omitempty" jsonschema:"only while nobody works on the mission"`
	WriteArea          *[]string       `json:"write_area,omitempty" jsonschema:"only while nobody works on the mission"`
	AcceptanceCriteria *[]string       `json:"acceptance_criteria,omitempty" jsonschema:"only while nobody works on the mission"`
	Review             *string         `json:"review,omitempty" jsonschema:"only while nobody works on the mission" enum:"none|required"`
	ModelPolicy        *ModelPolicyArg `json:"model_policy,omitempty" jsonschema:"only while nobody works on the mission"`
	TargetBranch       *string         `json:"target_branch,omitempty" jsonschema:"only while nobody works on the mission"`
}

func (a UpdateMissionArgs) patch() (engine.MissionPatch, error) {
	p := engine.MissionPatch{Title: a.Title, Brief: a.Brief, Priority: a.Priority, Persona: a.Persona,
		Capabilities: a.Capabilities, WriteArea: a.WriteArea, AcceptanceCriteria: a.AcceptanceCriteria,
		RetryBudget: a.RetryBudget, Review: a.Review, CostLimitUSD: a.CostLimitUSD, TargetBranch: a.TargetBranch, TokenLimit: a.TokenLimit}
	if a.WriteArea != nil {
		if err := checkPatterns("write_area", *a.WriteArea); err != nil {
			return p, err
		}
	}
	if a.ModelPolicy != nil {
		p.ModelPolicy = &domain.ModelPolicy{Mode: a.ModelPolicy.Mode, Model: a.ModelPolicy.Model, Allowed: a.ModelPolicy.Allowed}
	}
	if a.Deadline != nil {
		var d time.Time
		if *a.Deadline != "" {
			var err error
			if d, err = parseTime("deadline", *a.Deadline); err != nil {
				return p, err
			}
		}
		p.Deadline = &d
	}
	return p, nil
}

// MissionResult is the answer of tools that change one mission.
type MissionResult struct {
	Mission domain.Mission `json:"mission"`
}

// UpdateMission is the update_mission tool.
func UpdateMission(d *Deps) Tool {
	return newTool(toolSpec{
		name: "update_mission", title: "Change a mission", group: GroupMissions, effect: Destructive, idempotent: true,
		description: "Change fields of a mission that has not finished. priority, deadline, retry_budget, cost_limit_usd and token_limit can change at any time; the other fields only while nobody works on it (pending, interrupted or blocked). " +
			"Finished missions cannot change: retry them first. Returns the updated mission.",
		input: inputSchema[UpdateMissionArgs](), output: outputSchema[MissionResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a UpdateMissionArgs) (MissionResult, error) {
			p, err := a.patch()
			if err != nil {
				return MissionResult{}, err
			}
			m, err := d.Engine.UpdateMission(ctx, a.MissionID, p, actor(ctx))
			return MissionResult{Mission: m}, err
		}),
	})
}

// CancelMissionArgs are cancel_mission's arguments.
type CancelMissionArgs struct {
	MissionID string `json:"mission_id" jsonschema:"the mission to cancel"`
	Reason    string `json:"reason,omitempty" jsonschema:"why, for the event log"`
	Skip      bool   `json:"skip,omitempty" jsonschema:"true: give up on it without counting as a failure of its voyage (marked skipped)"`
}

// CancelMission is the cancel_mission tool.
func CancelMission(d *Deps) Tool {
	return newTool(toolSpec{
		name: "cancel_mission", title: "Cancel a mission", group: GroupMissions, effect: Destructive, idempotent: true,
		description: "Cancel a mission that has not finished. A running attempt loses its lease at once and its agent is stopped; its work is never landed. Missions that hard-depend on it become blocked with an escalation. " +
			"retry_mission reopens a cancelled mission.",
		input: inputSchema[CancelMissionArgs](), output: outputSchema[MissionResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a CancelMissionArgs) (MissionResult, error) {
			m, err := d.Engine.Cancel(ctx, a.MissionID, a.Reason, a.Skip, actor(ctx))
			return MissionResult{Mission: m}, err
		}),
	})
}

// MissionIDArgs name one mission.
type MissionIDArgs struct {
	MissionID string `json:"mission_id" jsonschema:"the mission id (msn_…)"`
}

// RetryMission is the retry_mission tool.
func RetryMission(d *Deps) Tool {
	return newTool(toolSpec{
		name: "retry_mission", title: "Retry a mission", group: GroupMissions, effect: Additive,
		description: "Reopen a failed, blocked or cancelled mission with a fresh retry budget (back to pending). Missions that were blocked because this one failed are reopened too. Returns the mission.",
		input:       inputSchema[MissionIDArgs](), output: outputSchema[MissionResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a MissionIDArgs) (MissionResult, error) {
			m, err := d.Engine.Retry(ctx, a.MissionID, actor(ctx))
			return MissionResult{Mission: m}, err
		}),
	})
}

// ApproveLandingArgs are approve_landing's arguments.
type ApproveLandingArgs struct {
	MissionID string `json:"mission_id" jsonschema:"a completed mission whose landing is approval or waiting"`
	Note      string `json:"note,omitempty" jsonschema:"why it may land, for the event log"`
}

// ApproveLanding is the approve_landing tool.
func ApproveLanding(d *Deps) Tool {
	return newTool(toolSpec{
		name: "approve_landing", title: "Approve a landing", group: GroupMissions, effect: Additive, idempotent: true,
		description: "Let a completed mission land on its target branch when its landing waits for a decision: approval (the repository's landing policy is approval) or waiting (the target's checkout was not clean; approving retries once it is). The landing state becomes approved and the scheduler merges it like any other. Returns the mission.",
		input:       inputSchema[ApproveLandingArgs](), output: outputSchema[MissionResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a ApproveLandingArgs) (MissionResult, error) {
			m, err := d.Engine.ApproveLanding(ctx, a.MissionID, a.Note, actor(ctx))
			return MissionResult{Mission: m}, err
		}),
	})
}
