package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// DispatchMission is one mission of a dispatch: a MissionInput with its client key.
type DispatchMission struct {
	Key string `json:"key" jsonschema:"short client key, unique in this dispatch (letters, digits, _ . : -); edges and depends_on refer to it" pattern:"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"`
	MissionInput
}

// EdgeInput is one dependency of a dispatch.
type EdgeInput struct {
	Mission   string `json:"mission" jsonschema:"key of a mission of this dispatch: the one that waits"`
	DependsOn string `json:"depends_on" jsonschema:"key of a mission of this dispatch, or the id of an existing mission: the one waited for"`
	Type      string `json:"type,omitempty" jsonschema:"hard (default): must complete and land first; soft: ordering hint; serialization: start after the other finished, whatever its outcome; conflict: never at the same time" enum:"hard|soft|serialization|conflict"`
	Reason    string `json:"reason,omitempty" jsonschema:"why, for whoever reads the plan later"`
}

// DispatchArgs are dispatch's arguments.
type DispatchArgs struct {
	Title          string            `json:"title" jsonschema:"the voyage's goal in a few words" maxLength:"200"`
	Goal           string            `json:"goal,omitempty" jsonschema:"the goal in full, for reviewers and escalations"`
	Repository     string            `json:"repository,omitempty" jsonschema:"default repository of the missions (absolute path, or a configured remote repository's name); default: the server's"`
	TargetBranch   string            `json:"target_branch,omitempty" jsonschema:"default target branch of the missions"`
	Priority       int               `json:"priority,omitempty" jsonschema:"default priority of the missions (1 urgent to 1000, default 100)" minimum:"1" maximum:"1000"`
	CostLimitUSD   float64           `json:"cost_limit_usd,omitempty" jsonschema:"cost limit of the whole voyage in US dollars; 0 = none" minimum:"0"`
	TokenLimit     int64             `json:"token_limit,omitempty" jsonschema:"token limit of the whole voyage (input, cached included, plus output); 0 = none" minimum:"0"`
	IdempotencyKey string            `json:"idempotency_key,omitempty" jsonschema:"makes the call safe to repeat: the same key returns the voyage made the first time"`
	Missions       []DispatchMission `json:"missions" jsonschema:"the missions, each with a unique key" minItems:"1" maxItems:"500"`
	Edges          []EdgeInput       `json:"edges,omitempty" jsonschema:"dependencies between the missions (and on existing missions)" maxItems:"5000"`
	WaitSeconds    int               `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds (0 to 600) for the voyage to settle, sending progress notifications when the request carries a progress token; 0 = answer at once" minimum:"0" maximum:"600"`
}

// DispatchResult is dispatch's answer.
type DispatchResult struct {
	Voyage domain.Voyage `json:"voyage"`
	// IDs maps each client key to its mission id.
	IDs map[string]string `json:"ids"`
	// Created is false when the idempotency key named an existing voyage.
	Created bool `json:"created"`
	// Counts is the number of missions per state when the call answered.
	Counts map[domain.MissionState]int `json:"counts"`
	// Settled is true when the voyage reached completed, blocked or cancelled.
	Settled bool `json:"settled"`
	// Waited is how long the call waited, in seconds.
	Waited float64 `json:"waited_seconds"`
}

func (a DispatchArgs) spec() (engine.VoyageSpec, error) {
	v := engine.VoyageSpec{IdempotencyKey: a.IdempotencyKey, Title: a.Title, Goal: a.Goal,
		Repository: a.Repository, TargetBranch: a.TargetBranch, Priority: a.Priority, CostLimitUSD: a.CostLimitUSD, TokenLimit: a.TokenLimit}
	for i, m := range a.Missions {
		s, err := m.spec(fmt.Sprintf("missions[%d].", i))
		if err != nil {
			return v, err
		}
		s.Key = m.Key
		v.Missions = append(v.Missions, s)
	}
	for _, e := range a.Edges {
		v.Edges = append(v.Edges, engine.EdgeSpec{Mission: e.Mission, DependsOn: e.DependsOn,
			Type: domain.EdgeType(e.Type), Reason: e.Reason})
	}
	return v, nil
}

// Dispatch is the dispatch tool.
func Dispatch(d *Deps) Tool {
	return newTool(toolSpec{
		name: "dispatch", title: "Dispatch a voyage", group: GroupMissions, effect: Additive,
		description: "Hand the scheduler a whole plan at once: a voyage of missions, each with a client key, and the edges between them (edges refer to keys of this call or to ids of existing missions). Everything is stored atomically or nothing is; a dependency cycle is refused and named. " +
			"Give missions write_area globs so that independent ones run in parallel. The answer maps each key to its mission id. With wait_seconds the call waits for the voyage to settle and streams progress notifications; otherwise follow it with voyage_status.",
		input: inputSchema[DispatchArgs](), output: outputSchema[DispatchResult](),
		handler: handle(func(ctx context.Context, req mcp.CallToolRequest, a DispatchArgs) (DispatchResult, error) {
			if a.WaitSeconds < 0 || a.WaitSeconds > 600 {
				return DispatchResult{}, fieldError("wait_seconds", fmt.Sprintf("%d is out of range", a.WaitSeconds), "wait 0 to 600 seconds")
			}
			spec, err := a.spec()
			if err != nil {
				return DispatchResult{}, err
			}
			for i := range spec.Missions {
				if spec.Missions[i].RetryBudget == nil {
					spec.Missions[i].RetryBudget = d.DefaultRetryBudget
				}
			}
			sub := d.Engine.Hub().Subscribe() // before dispatching: no change may slip between
			defer sub.Close()
			start := time.Now()
			res, err := d.Engine.Dispatch(ctx, spec, actor(ctx))
			if err != nil {
				return DispatchResult{}, err
			}
			out := DispatchResult{Voyage: res.Voyage, IDs: res.IDs, Created: res.Created}
			p := newProgress(ctx, req)
			stop := func() {}
			if a.WaitSeconds > 0 {
				stop = p.keepAlive(ctx, d.waitProgress())
			}
			err = waitVoyage(ctx, d.Engine, sub, res.Voyage.ID, time.Duration(a.WaitSeconds)*time.Second, p, &out)
			stop()
			out.Waited = time.Since(start).Round(time.Millisecond).Seconds()
			return out, err
		}),
	})
}

// voyageSettled reports whether a voyage reached a state that needs no more waiting.
func voyageSettled(s domain.VoyageState) bool {
	return s == domain.VoyageCompleted || s == domain.VoyageBlocked || s == domain.VoyageCancelled
}

// waitVoyage fills out's state and counts, waiting up to wait for the voyage to settle. It
// re-reads the voyage whenever the engine's hub reports a change (in-process, or another
// process's commit seen by the engine's watcher) and reports progress at each change.
func waitVoyage(ctx context.Context, e *engine.Engine, sub *engine.Subscription, id string, wait time.Duration, p *progress, out *DispatchResult) error {
	deadline := time.Now().Add(wait)
	last := ""
	for {
		sub.Take() // changes from here on wake the wait below
		vs, err := e.VoyageStatus(ctx, id)
		if err != nil {
			return err
		}
		out.Voyage, out.Counts, out.Settled = vs.Voyage, vs.Counts, voyageSettled(vs.Voyage.State)
		left := time.Until(deadline)
		if out.Settled || left <= 0 {
			return nil
		}
		total := len(vs.Missions)
		done := 0
		for _, m := range vs.Missions {
			if m.State.Terminal() {
				done++
			}
		}
		if msg := progressLine(vs); msg != last {
			p.send(ctx, float64(done), float64(total), msg)
			last = msg
		}
		if !sub.Wait(ctx, left) && ctx.Err() != nil {
			return nil // the client cancelled: answer with what is known
		}
	}
}

// progressLine summarises a voyage: "voyage active: 2 running, 3 pending".
func progressLine(vs engine.VoyageDetail) string {
	var parts []string
	for _, s := range domain.AllStates() {
		if n := vs.Counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	slices.Sort(parts)
	return fmt.Sprintf("voyage %s: %s", vs.Voyage.State, strings.Join(parts, ", "))
}

// CancelVoyageArgs are cancel_voyage's arguments.
type CancelVoyageArgs struct {
	VoyageID string `json:"voyage_id" jsonschema:"the voyage to cancel"`
	Reason   string `json:"reason,omitempty" jsonschema:"why, for the event log"`
}

// UpdateVoyageArgs are update_voyage's arguments.
type UpdateVoyageArgs struct {
	VoyageID            string   `json:"voyage_id" jsonschema:"the voyage to change"`
	RequirementsChanged *bool    `json:"requirements_changed,omitempty" jsonschema:"true: the goal or plan changed, so missions that have not started yet wait (nothing new starts) until you set it back to false; running work goes on"`
	CostLimitUSD        *float64 `json:"cost_limit_usd,omitempty" jsonschema:"the voyage's cost limit in US dollars (0 = none); reaching it stops new attempts and raises an escalation" minimum:"0"`
	TokenLimit          *int64   `json:"token_limit,omitempty" jsonschema:"the voyage's token limit (input, cached included, plus output; 0 = none); reaching it stops new attempts and raises an escalation" minimum:"0"`
	Note                string   `json:"note,omitempty" jsonschema:"why, for the event log"`
}

// UpdateVoyage is the update_voyage tool.
func UpdateVoyage(d *Deps) Tool {
	return newTool(toolSpec{
		name: "update_voyage", title: "Update a voyage", group: GroupMissions, effect: Destructive, idempotent: true,
		description: "Mark a voyage's requirements as changed (its missions that have not started are held until you clear the mark; both are recorded as events) or change its cost or token limit. Use it when the goal shifts mid-voyage: settle the new plan (update_mission, cancel_mission, dispatch), then clear the mark.",
		input:       inputSchema[UpdateVoyageArgs](), output: outputSchema[VoyageResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a UpdateVoyageArgs) (VoyageResult, error) {
			v, err := d.Engine.UpdateVoyage(ctx, a.VoyageID, engine.VoyagePatch{RequirementsChanged: a.RequirementsChanged,
				CostLimitUSD: a.CostLimitUSD, TokenLimit: a.TokenLimit, Note: a.Note}, actor(ctx))
			return VoyageResult{Voyage: v}, err
		}),
	})
}

// VoyageResult is the answer of tools that change a voyage.
type VoyageResult struct {
	Voyage domain.Voyage `json:"voyage"`
}

// CancelVoyage is the cancel_voyage tool.
func CancelVoyage(d *Deps) Tool {
	return newTool(toolSpec{
		name: "cancel_voyage", title: "Cancel a voyage", group: GroupMissions, effect: Destructive, idempotent: true,
		description: "Cancel every unfinished mission of a voyage (running attempts are stopped and never landed), then the voyage itself. Completed missions stay completed and landed work stays on its branch.",
		input:       inputSchema[CancelVoyageArgs](), output: outputSchema[VoyageResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a CancelVoyageArgs) (VoyageResult, error) {
			v, err := d.Engine.CancelVoyage(ctx, a.VoyageID, a.Reason, actor(ctx))
			return VoyageResult{Voyage: v}, err
		}),
	})
}
