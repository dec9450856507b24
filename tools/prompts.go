package tools

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/prompts"
)

// The MCP prompts are the templates of package prompts, filled from the scheduler's state
// when an argument names a mission or an escalation.
func (s *Server) addPrompts() {
	s.mcp.AddPrompt(mcp.NewPrompt(prompts.NamePlanVoyage,
		mcp.WithPromptDescription("Plan a voyage from a goal: split it into missions with keys, dependency edges and write areas, then call dispatch once."),
		mcp.WithArgument("goal", mcp.RequiredArgument(), mcp.ArgumentDescription("what should be achieved")),
		mcp.WithArgument("repository", mcp.ArgumentDescription("absolute path of the repository, or a configured remote repository's name (default: the server's)")),
		mcp.WithArgument("constraints", mcp.ArgumentDescription("rules the plan must respect")),
		mcp.WithArgument("max_missions", mcp.ArgumentDescription("upper bound on the number of missions")),
	), func(_ context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		p, err := planArgs(r.Params.Arguments)
		if err != nil {
			return nil, err
		}
		text, err := prompts.PlanVoyage(p)
		return promptResult("Plan a voyage", text, err)
	})
	s.mcp.AddPrompt(mcp.NewPrompt(prompts.NameAgentBrief,
		mcp.WithPromptDescription("The brief a child agent receives for a mission's current attempt: what to do, where, and how to report."),
		mcp.WithArgument("mission_id", mcp.RequiredArgument(), mcp.ArgumentDescription("the mission (msn_…)")),
		mcp.WithArgument("pull_mode", mcp.ArgumentDescription("true: the agent reports through the pull-mode tools (default); false: through NDJSON on stdout")),
	), func(ctx context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		m, pull, err := s.briefArgs(ctx, r.Params.Arguments)
		if err != nil {
			return nil, err
		}
		ws, err := recordedWorkspace(ctx, s.deps.Engine, m)
		if err != nil {
			return nil, err
		}
		text, err := prompts.AgentBrief(prompts.Brief{MissionID: m.ID, Attempt: max(m.Attempt, 1), Epoch: m.Lease.Epoch,
			Title: m.Title, Brief: m.Brief, AcceptanceCriteria: m.AcceptanceCriteria, WriteArea: m.WriteArea,
			Persona: m.Persona, Kind: string(m.Kind), SubjectID: m.SubjectID, Workspace: orDefault(ws.Path, "(created when the attempt starts)"),
			Branch: ws.Branch, BaseCommit: ws.BaseCommit, ReadOnly: ws.ReadOnly, WorkspaceNotes: ws.Notes, Checkpoint: string(m.Checkpoint),
			PullMode: pull, HeartbeatSeconds: int(s.deps.Engine.LeaseTTL().Seconds() / 3)})
		return promptResult("Brief for "+m.ID, text, err)
	})
	s.mcp.AddPrompt(mcp.NewPrompt(prompts.NameReviewMission,
		mcp.WithPromptDescription("Review a mission's work before it lands: check it against the brief and acceptance criteria and give one verdict (approved, minor, severe, insufficient) with findings."),
		mcp.WithArgument("mission_id", mcp.RequiredArgument(), mcp.ArgumentDescription("the mission to review (msn_…)")),
	), func(ctx context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		m, err := s.promptMission(ctx, r.Params.Arguments["mission_id"])
		if err != nil {
			return nil, err
		}
		ws, err := recordedWorkspace(ctx, s.deps.Engine, m)
		if err != nil {
			return nil, err
		}
		rv := prompts.Review{MissionID: m.ID, Title: m.Title, Brief: m.Brief, AcceptanceCriteria: m.AcceptanceCriteria,
			WriteArea: m.WriteArea, Branch: ws.Branch, BaseCommit: ws.BaseCommit}
		if m.Result != nil {
			rv.Summary = m.Result.Summary
		}
		if s.deps.Workspaces != nil {
			if d, err := s.deps.Workspaces.Diff(ctx, m); err == nil {
				for _, f := range d.Files {
					rv.ChangedFiles = append(rv.ChangedFiles, f.Path)
				}
			}
		}
		text, err := prompts.ReviewMission(rv)
		return promptResult("Review "+m.ID, text, err)
	})
	s.mcp.AddPrompt(mcp.NewPrompt(prompts.NameEscalationReport,
		mcp.WithPromptDescription("Write an escalation report (reason, decision required, evidence, safe next step, route) for a blocker, then file it with escalate or resolve the existing one."),
		mcp.WithArgument("escalation_id", mcp.ArgumentDescription("an existing escalation to rewrite clearly (esc_…)")),
		mcp.WithArgument("mission_id", mcp.ArgumentDescription("the blocked mission, when there is no escalation yet (msn_…)")),
	), func(ctx context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		e, err := s.promptEscalation(ctx, r.Params.Arguments["escalation_id"], r.Params.Arguments["mission_id"])
		if err != nil {
			return nil, err
		}
		text, err := prompts.EscalationReport(e)
		return promptResult("Escalation report", text, err)
	})
}

func promptResult(description, text string, err error) (*mcp.GetPromptResult, error) {
	if err != nil {
		return nil, err
	}
	return mcp.NewGetPromptResult(description, []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
	}), nil
}

// checkPrompt returns a *promptArgError when prompt name's arguments are missing or
// invalid (the same checks its handler makes), another error when a lookup failed otherwise,
// nil when the prompt may be rendered. An unknown prompt is left to mcp-go (-32602 itself).
func (s *Server) checkPrompt(ctx context.Context, name string, args map[string]string) error {
	var err error
	switch name {
	case prompts.NamePlanVoyage:
		_, err = planArgs(args)
	case prompts.NameAgentBrief:
		_, _, err = s.briefArgs(ctx, args)
	case prompts.NameReviewMission:
		_, err = s.promptMission(ctx, args["mission_id"])
	case prompts.NameEscalationReport:
		_, err = s.promptEscalation(ctx, args["escalation_id"], args["mission_id"])
	}
	return err
}

// planArgs reads plan_voyage's arguments: goal is required, max_missions a positive number
// when given.
func planArgs(a map[string]string) (prompts.Plan, error) {
	if strings.TrimSpace(a["goal"]) == "" {
		return prompts.Plan{}, &promptArgError{arg: "goal", problem: "is required",
			fix: `send what the voyage should achieve, e.g. {"goal": "add a --json flag to the list command"}`}
	}
	maxMissions := 0
	if v := a["max_missions"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return prompts.Plan{}, &promptArgError{arg: "max_missions", problem: fmt.Sprintf("%q is not a positive number", clip(v, 20)),
				fix: `send a whole number of at least 1 as a string (e.g. "5"), or leave it out for no bound`}
		}
		maxMissions = n
	}
	return prompts.Plan{Goal: a["goal"], Repository: a["repository"], Constraints: a["constraints"], MaxMissions: maxMissions}, nil
}

// briefArgs reads agent_brief's arguments: the mission, and pull_mode ("true" or "false",
// default true).
func (s *Server) briefArgs(ctx context.Context, a map[string]string) (domain.Mission, bool, error) {
	pull := true
	switch v := a["pull_mode"]; v {
	case "", "true":
	case "false":
		pull = false
	default:
		return domain.Mission{}, false, &promptArgError{arg: "pull_mode", problem: fmt.Sprintf("is %q", clip(v, 20)),
			fix: `send "true" (the agent reports through the pull-mode tools, the default) or "false" (NDJSON on stdout)`}
	}
	m, err := s.promptMission(ctx, a["mission_id"])
	return m, pull, err
}

// promptMission looks up the mission a prompt argument mission_id names; a missing,
// malformed or unknown id is a *promptArgError.
func (s *Server) promptMission(ctx context.Context, id string) (domain.Mission, error) {
	const fix = "send a mission id (msn_…) from dispatch, create_mission or list_missions"
	if id == "" {
		return domain.Mission{}, &promptArgError{arg: "mission_id", problem: "is required", fix: fix}
	}
	if !domain.ValidID(domain.PrefixMission, id) {
		return domain.Mission{}, &promptArgError{arg: "mission_id", problem: fmt.Sprintf("%q is not a mission id", clip(id, 80)), fix: fix}
	}
	m, err := s.deps.Engine.Mission(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Mission{}, &promptArgError{arg: "mission_id", problem: "names no mission: " + err.Error(), fix: fix}
	}
	return m, err
}

// promptEscalation gathers what the report prompt restates.
func (s *Server) promptEscalation(ctx context.Context, escID, missionID string) (prompts.Escalation, error) {
	var out prompts.Escalation
	if escID != "" {
		const fix = "send an escalation id (esc_…) from list_escalations, or leave it out and send mission_id"
		if !domain.ValidID(domain.PrefixEscalation, escID) {
			return out, &promptArgError{arg: "escalation_id", problem: fmt.Sprintf("%q is not an escalation id", clip(escID, 80)), fix: fix}
		}
		e, err := s.deps.Engine.Escalation(ctx, escID)
		if errors.Is(err, domain.ErrNotFound) {
			return out, &promptArgError{arg: "escalation_id", problem: "names no escalation: " + err.Error(), fix: fix}
		}
		if err != nil {
			return out, err
		}
		out = prompts.Escalation{ID: e.ID, MissionIDs: e.MissionIDs, VoyageID: e.VoyageID, Route: string(e.Route),
			Kind: e.Kind, Reason: e.Reason, DecisionRequired: e.DecisionRequired, Evidence: e.Evidence, SafeNextStep: e.SafeNextStep}
	} else if missionID != "" {
		out.MissionIDs = []string{missionID}
	}
	for _, id := range out.MissionIDs {
		m, err := s.promptMission(ctx, id)
		var gone *promptArgError
		if escID != "" && errors.As(err, &gone) {
			// The escalation names a mission no longer stored (pruned): say so in the report
			// rather than blame an argument the caller did not send.
			out.Missions = append(out.Missions, id+": no longer stored (pruned)")
			continue
		}
		if err != nil {
			return out, err
		}
		if out.VoyageID == "" {
			out.VoyageID = m.VoyageID
		}
		line := fmt.Sprintf("%s (%s): %s", m.ID, m.Title, m.State)
		if m.Decision != nil {
			line += ": " + m.Decision.Reason
		}
		if m.LastFailure != nil && out.ID == "" {
			out.Evidence = append(out.Evidence, "last failure: "+m.LastFailure.Kind+" "+orDefault(m.LastFailure.Summary, m.LastFailure.Diagnostic))
		}
		out.Missions = append(out.Missions, line)
	}
	return out, nil
}

// recordedWorkspace reads the workspace of a mission's latest recorded attempt (zero when
// none was recorded yet: it is made when an attempt starts).
func recordedWorkspace(ctx context.Context, e *engine.Engine, m domain.Mission) (engine.Workspace, error) {
	w, err := e.Workspace(ctx, m.ID, 0)
	if errors.Is(err, domain.ErrNotFound) {
		return engine.Workspace{}, nil
	}
	return w.Workspace, err
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
