package scheduler

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
	"github.com/mcp-scheduler/mcp-scheduler/prompts"
)

// maxReviewRounds bounds review → verification → review loops before asking the Main Agent.
const maxReviewRounds = 2

// reviewGate runs a mission marked review: required through its reviewer before it lands
// (design brief §5 step 5). It reports true when the latest review approved the attempt.
// Verdicts: approved → land; minor → a repair mission; severe → block with an escalation
// (approve_landing can still land it); insufficient → a verification mission, then another
// review round.
func (lr *lander) reviewGate(ctx context.Context, m *domain.Mission) (bool, error) {
	rounds, err := lr.eng.ListMissions(ctx, engine.MissionFilter{SubjectID: m.ID, Kind: domain.KindReview, Limit: 100})
	if err != nil {
		return false, err
	}
	latest, round := planner.LatestReview(rounds, m)
	if latest == nil {
		return false, lr.startReview(ctx, m, 1, "")
	}
	switch latest.State {
	case domain.StateCompleted:
	case domain.StateFailed, domain.StateCancelled:
		return false, lr.reviewEscalation(ctx, m, "its review mission "+latest.ID+" ended "+string(latest.State), nil)
	default:
		return false, nil // the reviewer is still at work (or waits for a decision of its own)
	}
	verdict, findings := domain.VerdictApproved, []domain.Finding(nil)
	if latest.Result != nil {
		verdict, findings = orDefault(latest.Result.Verdict, domain.VerdictApproved), latest.Result.Findings
	}
	switch verdict {
	case domain.VerdictApproved:
		return true, nil
	case domain.VerdictMinor:
		r, err := lr.repair(ctx, m, "review", "The reviewer asked for changes:\n"+findingLines(findings))
		if err != nil {
			return false, err
		}
		_, err = lr.eng.RepairLanding(ctx, m.ID, r.ID, "review "+latest.ID+" asked for a repair")
		return false, err
	case domain.VerdictInsufficient:
		if round >= maxReviewRounds {
			return false, lr.reviewEscalation(ctx, m, fmt.Sprintf("%d review rounds found the evidence insufficient", round), findings)
		}
		return false, lr.startReview(ctx, m, round+1, findingLines(findings))
	}
	return false, lr.reviewEscalation(ctx, m, "the reviewer found severe problems", findings)
}

// startReview creates review round n of m's current attempt (and, when the previous round
// found the evidence insufficient, a verification mission it waits for). Idempotency keys
// make a repeated call return the missions already made.
func (lr *lander) startReview(ctx context.Context, m *domain.Mission, n int, missing string) error {
	rec, err := runWith(ctx, lr.eng, m)
	if err != nil {
		return err
	}
	var changed []string
	if repo, err := lr.wt.Open(m.Repository); err == nil && rec.Worktree.Branch != "" {
		if d, err := lr.wt.Diff(ctx, repo, rec.Worktree.BaseCommit, rec.Worktree.Branch); err == nil {
			for _, f := range d.Files {
				changed = append(changed, f.Path)
			}
		}
	}
	summary := ""
	if m.Result != nil {
		summary = m.Result.Summary
	}
	brief, err := prompts.ReviewMission(prompts.Review{MissionID: m.ID, Title: m.Title, Brief: quote(m.Brief),
		AcceptanceCriteria: m.AcceptanceCriteria, WriteArea: m.WriteArea, Branch: rec.Worktree.Branch,
		BaseCommit: rec.Worktree.BaseCommit, ChangedFiles: changed, Summary: summary})
	if err != nil {
		return err
	}
	var deps []string
	if missing != "" {
		v, err := lr.derived(ctx, m, domain.KindVerify, fmt.Sprintf("verify-%s-a%d-r%d", m.ID, m.Attempt, n), engine.DerivedTitle("Verify: ", m.Title), "",
			"Gather the evidence a reviewer found missing for mission "+m.ID+" ("+m.Title+"), without changing its work:\n\n"+missing+
				"\n\nThe mission's brief, quoted:\n\n"+quote(m.Brief))
		if err != nil {
			return err
		}
		deps = []string{v.ID}
	}
	r, err := lr.derived(ctx, m, domain.KindReview, planner.ReviewKeyPrefix(m.ID, m.Attempt)+strconv.Itoa(n), engine.DerivedTitle("Review: ", m.Title), "reviewer", brief, deps...)
	if err != nil {
		return err
	}
	_, err = lr.eng.AwaitReview(ctx, m.ID, r.ID)
	return err
}

// repair creates (once per attempt and reason) a repair mission for m: it starts from m's
// branch with the target merged in, and its landing carries m's work.
func (lr *lander) repair(ctx context.Context, m *domain.Mission, why, details string) (domain.Mission, error) {
	brief := fmt.Sprintf("Mission %s (%s) finished, but its work cannot land yet: %s.\n\n%s\n\n"+
		"You work on a branch that holds its work with the target branch merged in. Fix the problem, keep the mission's intent, and commit.\n\nThe original brief, quoted:\n\n%s",
		m.ID, m.Title, map[string]string{"conflict": "it conflicts with the target branch", "checks": "the repository's checks failed", "review": "its reviewer asked for changes"}[why],
		details, quote(m.Brief))
	return lr.derived(ctx, m, domain.KindRepair, fmt.Sprintf("repair-%s-a%d-%s", m.ID, m.Attempt, why), engine.DerivedTitle("Repair: ", m.Title), m.Persona, brief)
}

// derived creates a mission about m (review, verification, repair) in m's voyage and
// repository, depending on dependsOn. Read-only kinds get a write area of their own so that
// they never make the repository exclusive.
func (lr *lander) derived(ctx context.Context, m *domain.Mission, kind domain.MissionKind, key, title, persona, brief string, dependsOn ...string) (domain.Mission, error) {
	budget := 2
	spec := engine.MissionSpec{Title: title, Brief: brief, Repository: m.Repository, TargetBranch: m.TargetBranch,
		Priority: m.Priority, Persona: persona, Capabilities: m.Capabilities, WriteArea: m.WriteArea, Kind: kind,
		SubjectID: m.ID, IdempotencyKey: key, VoyageID: m.VoyageID, RetryBudget: &budget, AcceptanceCriteria: m.AcceptanceCriteria,
		DependsOn: dependsOn}
	if kind == domain.KindReview || kind == domain.KindVerify {
		spec.Workspace, spec.WriteArea, spec.Capabilities = engine.WorkspaceSnapshot, []string{".mcp-scheduler/" + key}, nil
	}
	c, err := lr.eng.CreateMission(ctx, spec, "scheduler")
	return c.Mission, err
}

// reviewEscalation asks the Main Agent to decide about a mission its review did not approve;
// approve_landing still lands it.
func (lr *lander) reviewEscalation(ctx context.Context, m *domain.Mission, why string, findings []domain.Finding) error {
	var ev []string
	for _, f := range findings {
		ev = append(ev, findingLine(f))
	}
	lr.once(ctx, engine.EscalationSpec{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID,
		Route: domain.RouteMainAgent, Kind: "review", Reason: fmt.Sprintf("mission %s (%s) was not approved: %s", m.ID, m.Title, why),
		DecisionRequired: "land it anyway (approve_landing), retry it (retry_mission after cancel), or cancel it",
		Evidence:         ev, SafeNextStep: "get_mission_diff " + m.ID})
	_, err := lr.eng.AwaitApproval(ctx, m.ID, why)
	return err
}

func findingLines(fs []domain.Finding) string {
	if len(fs) == 0 {
		return "(no findings were given)"
	}
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("- " + findingLine(f) + "\n")
	}
	return b.String()
}

func findingLine(f domain.Finding) string {
	loc := f.Path
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", f.Path, f.Line)
	}
	if loc != "" {
		loc += ": "
	}
	return strings.TrimSpace(fmt.Sprintf("[%s] %s%s", orDefault(f.Severity, "note"), loc, f.Message))
}

// quote marks every line of a brief as a quotation, so that instructions written for another
// agent (the reference agent's @directives among them) are read, not run.
func quote(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}
