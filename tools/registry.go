package tools

import (
	"fmt"
	"regexp"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Group says which part of the surface a tool belongs to (the README table is grouped by
// it).
type Group string

// Tool groups.
const (
	GroupMissions    Group = "missions"    // create, change and follow missions and voyages
	GroupEscalations Group = "escalations" // blockers and decisions
	GroupScheduler   Group = "scheduler"   // the scheduler as a whole
	GroupPull        Group = "pull mode"   // an MCP-capable agent working for the scheduler
)

// Effect is what a tool does to the scheduler's state; it fixes the tool's annotations.
type Effect int

// Effects.
const (
	// ReadOnly tools change nothing: readOnlyHint=true, destructiveHint=false.
	ReadOnly Effect = iota
	// Additive tools add or move state forward without discarding anything a caller made.
	Additive
	// Destructive tools may overwrite or stop someone's work (cancel, block, update fields).
	Destructive
)

// Tool is one MCP tool with its handler and the metadata the registry checks.
type Tool struct {
	server.ServerTool
	Group  Group
	Effect Effect
}

// namePattern is what every tool name must match: the brief's ^[a-z0-9_]{1,64}$, which
// is inside what Claude Desktop and Claude Code accept (^[a-zA-Z0-9_-]{1,64}$, bugs.md B04).
var namePattern = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// toolSpec describes one tool; newTool turns it into a Tool with deliberate annotations.
type toolSpec struct {
	name, title, description string
	group                    Group
	effect                   Effect
	idempotent               bool
	input, output            []byte
	handler                  server.ToolHandlerFunc
}

// newTool builds a tool whose four annotation hints are all set on purpose (mcp.NewTool
// would otherwise claim destructive=true and openWorld=true): every tool works on the
// scheduler's own state, so openWorld is false; read-only tools are non-destructive and
// idempotent.
func newTool(s toolSpec) Tool {
	readOnly := s.effect == ReadOnly
	idempotent := s.idempotent || readOnly
	t := mcp.NewTool(s.name,
		mcp.WithDescription(s.description),
		mcp.WithToolAnnotation(mcp.ToolAnnotation{
			Title:           s.title,
			ReadOnlyHint:    mcp.ToBoolPtr(readOnly),
			DestructiveHint: mcp.ToBoolPtr(s.effect == Destructive),
			IdempotentHint:  mcp.ToBoolPtr(idempotent),
			OpenWorldHint:   mcp.ToBoolPtr(false),
		}),
		mcp.WithRawInputSchema(s.input),
		mcp.WithRawOutputSchema(s.output),
	)
	t.InputSchema = mcp.ToolInputSchema{} // the raw schema is the schema
	if isTaskTool(s.name) {
		t.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional} // taskrpc.go
	}
	return Tool{ServerTool: server.ServerTool{Tool: t, Handler: s.handler}, Group: s.group, Effect: s.effect}
}

// Validate checks one tool against the registry's rules: a valid name, a description, an
// object input schema, all four annotation hints set and consistent with its effect.
func (t Tool) Validate() error {
	name := t.Tool.Name
	if !namePattern.MatchString(name) {
		return fmt.Errorf("tool name %q must match %s", name, namePattern)
	}
	if t.Tool.Description == "" {
		return fmt.Errorf("tool %s has no description", name)
	}
	a := t.Tool.Annotations
	if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
		return fmt.Errorf("tool %s leaves an annotation hint unset", name)
	}
	if *a.ReadOnlyHint != (t.Effect == ReadOnly) || *a.DestructiveHint != (t.Effect == Destructive) {
		return fmt.Errorf("tool %s: annotations do not match its effect", name)
	}
	if t.Handler == nil {
		return fmt.Errorf("tool %s has no handler", name)
	}
	return nil
}

// AllTools returns every tool in the order tools/list shows them, with handlers bound to d.
// Grouped: missions and voyages, escalations, the scheduler, pull mode.
func AllTools(d *Deps) []Tool {
	return []Tool{
		// missions and voyages
		CreateMission(d),
		Dispatch(d),
		UpdateMission(d),
		CancelMission(d),
		CancelVoyage(d),
		UpdateVoyage(d),
		RetryMission(d),
		BlockMission(d),
		ApproveLanding(d),
		GetMission(d),
		ListMissions(d),
		VoyageStatus(d),
		GetMissionLog(d),
		GetMissionDiff(d),
		// escalations
		Escalate(d),
		ListEscalations(d),
		ResolveEscalation(d),
		// the scheduler
		Status(d),
		GetEvents(d),
		ListAgents(d),
		PauseScheduler(d),
		ResumeScheduler(d),
		// pull mode
		ClaimMission(d),
		Heartbeat(d),
		ReportProgress(d),
		CheckpointMission(d),
		YieldMission(d),
		CompleteMission(d),
		FailMission(d),
	}
}
