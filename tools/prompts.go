package tools

import (
	"context"
	"errors"
	"fmt"
	"strconv"

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
		mcp.WithArgument("repository", mcp.ArgumentDescription("absolute path of the repository (default: the server's)")),
		mcp.WithArgument("constraints", mcp.ArgumentDescription("rules the plan must respect")),
		mcp.WithArgument("max_missions", mcp.ArgumentDescription("upper bound on the number of missions")),
	), func(_ context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		a := r.Params.Arguments
		maxMissions := 0
		if v := a["max_missions"]; v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("max_missions: %q is not a positive number", clip(v, 20))
			}
			maxMissions = n
		}
		text, err := prompts.PlanVoyage(prompts.Plan{Goal: a["goal"], Repository: a["repository"],
			Constraints: a["constraints"], MaxMissions: maxMissions})
		return promptResult("Plan a voyage", text, err)
	})
	s.mcp.AddPrompt(mcp.NewPrompt(prompts.NameAgentBrief,
		mcp.WithPromptDescription("The brief a child agent receives for a mission's current attempt: what to do, where, and how to report."),
		mcp.WithArgument("mission_id", mcp.RequiredArgument(), mcp.ArgumentDescription("the mission (msn_…)")),
		mcp.WithArgument("pull_mode", mcp.ArgumentDescription("true: the agent reports through the pull-mode tools (default); false: through NDJSON on stdout")),
	), func(ctx context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		m, err := s.promptMission(ctx, r.Params.Arguments["mission_id"])
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
			Branch: ws.Branch, BaseCommit: ws.BaseCommit, ReadOnly: ws.ReadOnly, Checkpoint: string(m.Checkpoint),
			PullMode: r.Params.Arguments["pull_mode"] != "false", HeartbeatSeconds: int(s.deps.Engine.LeaseTTL().Seconds() / 3)})
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

func (s *Server) promptMission(ctx context.Context, id string) (domain.Mission, error) {
	if id == "" {
		return domain.Mission{}, fmt.Errorf("mission_id is required")
	}
	d, err := s.deps.Engine.GetMission(ctx, id)
	return d.Mission, err
}

// promptEscalation gathers what the report prompt restates.
func (s *Server) promptEscalation(ctx context.Context, escID, missionID string) (prompts.Escalation, error) {
	var out prompts.Escalation
	if escID != "" {
		if !domain.ValidID(domain.PrefixEscalation, escID) {
			return out, fmt.Errorf("escalation_id: %q is not an escalation id", clip(escID, 80))
		}
		e, err := s.deps.Engine.Escalation(ctx, escID)
		if errors.Is(err, domain.ErrNotFound) {
			return out, fmt.Errorf("escalation %s not found", escID)
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
