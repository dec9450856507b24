package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// landingPolicy is repository repo's landing policy as the planner sees it.
func (c Config) landingPolicy(repo string) planner.LandingPolicy {
	p := c.policy(repo)
	return planner.LandingPolicy{Leave: p.Landing == LandingNone, Approval: p.Landing == LandingApproval, TargetBranch: p.TargetBranch}
}

// readyLanding is a completed mission that passed review and the landing policy and whose
// workspace is to be landed.
type readyLanding struct {
	m   domain.Mission
	rec RunRecord
}

// landOne runs the gates before a landing in the order planner.NextStep gives (review when
// required, the landing policy, a workspace to land) and says whether the mission is ready to
// land.
func (lr *lander) landOne(ctx context.Context, m *domain.Mission) (readyLanding, bool, error) {
	pol := lr.cfg.landingPolicy(m.Repository)
	step := planner.NextStep(m, pol, false)
	if step == planner.StepReview {
		lr.host.phase(PhaseReviewing)
		approved, err := lr.reviewGate(ctx, m)
		if err != nil || !approved {
			return readyLanding{}, false, err
		}
		step = planner.NextStep(m, pol, true)
	}
	switch step {
	case planner.StepLeave:
		_, err := lr.eng.LeaveLanding(ctx, m.ID, "landing policy none: the branch is left for a person")
		return readyLanding{}, false, err
	case planner.StepAskApproval:
		lr.once(ctx, engine.EscalationSpec{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID,
			Route: domain.RouteMainAgent, Kind: "approval", Reason: fmt.Sprintf("mission %s (%s) is ready to land and the repository's policy asks for approval", m.ID, m.Title),
			DecisionRequired: "approve the landing (approve_landing) after looking at get_mission_diff", SafeNextStep: "get_mission_diff " + m.ID})
		_, err := lr.eng.AwaitApproval(ctx, m.ID, "landing policy approval")
		return readyLanding{}, false, err
	}
	rec, err := runWith(ctx, lr.eng, m)
	if err != nil {
		return readyLanding{}, false, err
	}
	if rec.Worktree.Branch == "" || rec.Worktree.ReadOnly {
		_, err := lr.eng.RecordLanding(ctx, domain.Landing{MissionID: m.ID, Attempt: m.Attempt, Status: string(worktree.LandNothingToLand),
			Detail: "the attempt had no writable workspace"}, domain.LandingNotRequired)
		return readyLanding{}, false, err
	}
	return readyLanding{m: *m, rec: rec}, true, nil
}

// landBatch lands missions of one repository and target branch: alone with Land, several in
// one pass with LandBatch (the target moves once; see worktree.LandBatch), and records each
// outcome. A batch's duration is shared evenly among its missions in their landing records.
func (lr *lander) landBatch(ctx context.Context, ready []readyLanding) error {
	lr.host.phase(PhaseMerging)
	repo, err := lr.wt.Open(ready[0].m.Repository)
	if err != nil {
		return err
	}
	pol := lr.cfg.policy(ready[0].m.Repository)
	reqs := make([]worktree.LandRequest, len(ready))
	for i, r := range ready {
		reqs[i] = worktree.LandRequest{Repo: repo, MissionID: r.m.ID, Attempt: r.m.Attempt, Workspace: r.rec.Worktree,
			TargetBranch: lr.cfg.targetBranch(&r.m), WriteArea: r.m.WriteArea,
			Message: landMessage(&r.m), Check: repoChecks(pol),
			Elsewhere: lr.cfg.Node != "" && r.m.Node != lr.cfg.Node, Published: lr.cfg.Node != "" || r.rec.Worktree.RemoteURL != ""}
	}
	started := time.Now()
	var out []worktree.BatchLanding
	if len(reqs) == 1 {
		l, err := lr.wt.Land(ctx, reqs[0])
		out = []worktree.BatchLanding{{Landing: l, Err: err}}
	} else if out, err = lr.wt.LandBatch(ctx, reqs); err != nil {
		return err
	}
	share := time.Since(started).Milliseconds() / int64(len(reqs))
	var errs []error
	for i := range ready {
		if err := lr.recordLanding(ctx, &ready[i], out[i], share, pol); err != nil {
			if ctx.Err() != nil {
				return err
			}
			errs = append(errs, fmt.Errorf("mission %s: %w", ready[i].m.ID, err))
		}
	}
	return errors.Join(errs...)
}

// recordLanding records one landing's outcome: landed, waiting for a clean checkout (with an
// escalation to the person), a conflict or failed checks (landingProblem), or refused
// (landingRefused).
func (lr *lander) recordLanding(ctx context.Context, r *readyLanding, b worktree.BatchLanding, durationMS int64, pol RepoPolicy) error {
	m, l, err := &r.m, b.Landing, b.Err
	target := lr.cfg.targetBranch(m)
	if target == "" { // the repository's default, resolved when the workspace was made
		target = r.rec.Worktree.TargetBranch
	}
	if errors.Is(err, worktree.ErrUnresolvedConflicts) {
		l, err = worktree.Landing{Status: worktree.LandConflicted, Detail: err.Error()}, nil
	}
	if errors.Is(err, worktree.ErrPushRefused) {
		lr.pushRefused(ctx, m, target, err)
		return nil
	}
	if err != nil {
		return err
	}
	lr.cfg.Metrics.LandingObserved(string(l.Status), time.Duration(durationMS)*time.Millisecond)
	record := domain.Landing{MissionID: m.ID, Attempt: m.Attempt, Status: string(l.Status), TargetBranch: target,
		Commit: l.Commit, OldTarget: l.OldTarget, NewTarget: l.NewTarget, ChangedFiles: l.ChangedFiles,
		OutsideWriteArea: l.OutsideWriteArea, ConflictPaths: l.ConflictPaths, Detail: landingDetail(l),
		DurationMS: durationMS}
	switch l.Status {
	case worktree.LandLanded, worktree.LandAlreadyLanded, worktree.LandNothingToLand:
		state := domain.LandingLanded
		if l.Status == worktree.LandNothingToLand {
			state = domain.LandingNotRequired
		}
		if _, err := lr.eng.RecordLanding(ctx, record, state); err != nil {
			return err
		}
		return lr.carried(ctx, m)
	case worktree.LandWaiting:
		lr.once(ctx, engine.EscalationSpec{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID, Route: domain.RoutePerson,
			Kind: "checkout", Reason: fmt.Sprintf("mission %s cannot land: the target is checked out in %s and local changes touch the same files", m.ID, l.Checkout),
			DecisionRequired: "commit, stash or discard the local changes in that checkout; the landing is retried by itself",
			Evidence:         append([]string{"checkout: " + l.Checkout}, l.BlockingFiles...), SafeNextStep: "git -C " + l.Checkout + " status"})
		_, err := lr.eng.RecordLanding(ctx, record, domain.LandingWaiting)
		return err
	case worktree.LandConflicted, worktree.LandChecksFailed:
		return lr.landingProblem(ctx, m, record, pol, l)
	case worktree.LandRefused:
		return lr.landingRefused(ctx, m, record, l)
	}
	return fmt.Errorf("unexpected landing status %q", l.Status)
}

// landingProblem handles a conflict or failed checks: a repair mission (policy repair, and
// always for failed checks) or a block with an escalation (policy block).
func (lr *lander) landingProblem(ctx context.Context, m *domain.Mission, record domain.Landing, pol RepoPolicy, l worktree.Landing) error {
	why, details := "conflict", "The landing on "+record.TargetBranch+" conflicts in:\n- "+strings.Join(l.ConflictPaths, "\n- ")
	if l.Status == worktree.LandChecksFailed {
		why, details = "checks", "The repository's checks failed on the merged tree:\n\n"+tail(l.CheckOutput, 8000)
	}
	if why == "conflict" && pol.OnConflict == OnConflictBlock {
		if _, err := lr.eng.RecordLanding(ctx, record, domain.LandingConflicted); err != nil {
			return err
		}
		lr.once(ctx, engine.EscalationSpec{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID, Route: domain.RouteMainAgent,
			Kind: "conflict", Reason: fmt.Sprintf("mission %s (%s) conflicts with %s", m.ID, m.Title, record.TargetBranch),
			DecisionRequired: "resolve the conflict on the mission's branch by hand, or retry the mission on the new target",
			Evidence:         l.ConflictPaths, SafeNextStep: "get_mission_diff " + m.ID})
		return nil
	}
	depth, err := lr.repairDepth(ctx, m)
	if err != nil {
		return err
	}
	if depth >= maxRepairChain {
		return lr.repairsExhausted(ctx, m, record, why, details, depth)
	}
	lr.host.phase(PhaseRepairing)
	if _, err := lr.repair(ctx, m, why, details); err != nil {
		return err
	}
	_, err = lr.eng.RecordLanding(ctx, record, domain.LandingRepair)
	return err
}

// maxRepairChain bounds a chain of repair missions: when the landing of a repair of a repair
// still conflicts or fails the checks, the scheduler asks for a decision instead of repairing
// the repair again (without a bound the chain never ends: each repair that changes nothing
// fails the same way and begets the next).
const maxRepairChain = 2

// repairDepth counts the repair missions in the chain that ends at m (m included).
func (lr *lander) repairDepth(ctx context.Context, m *domain.Mission) (int, error) {
	depth := 0
	for cur := m; cur.Kind == domain.KindRepair && cur.SubjectID != "" && depth < maxRepairChain; depth++ {
		d, err := lr.eng.GetMission(ctx, cur.SubjectID)
		if err != nil {
			return 0, fmt.Errorf("repair chain of %s: %w", m.ID, err)
		}
		cur = &d.Mission
	}
	return depth, nil
}

// repairsExhausted stops a repair chain: the landing is recorded as conflicted and the Main
// Agent gets an escalation with the problem, like on_conflict = block.
func (lr *lander) repairsExhausted(ctx context.Context, m *domain.Mission, record domain.Landing, why, details string, depth int) error {
	if _, err := lr.eng.RecordLanding(ctx, record, domain.LandingConflicted); err != nil {
		return err
	}
	what := map[string]string{"conflict": "conflicts with " + record.TargetBranch, "checks": "fails the repository's checks"}[why]
	lr.once(ctx, engine.EscalationSpec{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID, Route: domain.RouteMainAgent,
		Kind: why, Reason: fmt.Sprintf("the work of mission %s (%s) still %s after %d repair missions", m.ID, m.Title, what, depth),
		DecisionRequired: "fix it by hand on the mission's branch, or cancel the work and dispatch it again with clearer instructions",
		Evidence:         []string{tail(details, 4000)}, SafeNextStep: "get_mission_diff " + m.ID})
	return nil
}

// carried marks the work a landed repair mission carried as landed too (its branch started
// from the subject's branch, so the subject's work is in it), up the chain of repairs.
func (lr *lander) carried(ctx context.Context, m *domain.Mission) error {
	for m.Kind == domain.KindRepair && m.SubjectID != "" {
		d, err := lr.eng.GetMission(ctx, m.SubjectID)
		if err != nil {
			return err
		}
		subj := d.Mission
		if subj.State != domain.StateCompleted || subj.Landing.Satisfies() {
			return nil
		}
		if _, err := lr.eng.CarryLanding(ctx, subj.ID, m.ID); err != nil {
			return err
		}
		lr.unpublishCarried(ctx, &subj)
		m = &subj
	}
	return nil
}

// unpublishCarried deletes from the remote the published branch of the attempt whose work a
// landed repair carried (cluster mode: worktree.Manager.Publish pushed it at completion). The
// carried landing settled that attempt, so nothing needs the branch any more; without this it
// stayed on the remote until the leader's hourly sweep. A local repository, an attempt with
// no branch, or a failed delete (logged by Unpublish) changes nothing else.
func (lr *lander) unpublishCarried(ctx context.Context, m *domain.Mission) {
	rec, err := runWith(ctx, lr.eng, m)
	if err != nil || rec.Worktree.Branch == "" {
		return
	}
	repo, err := lr.wt.Open(m.Repository)
	if err != nil {
		return
	}
	lr.wt.Unpublish(ctx, repo, rec.Worktree.Branch)
}

// landingDetail is the landing record's detail: git's explanation, the failing check's output,
// and the stale git locks a killed git had left in the person's checkout that the landing
// removed (worktree.Landing.ClearedLocks), so that the removal is in the landing's event.
func landingDetail(l worktree.Landing) string {
	d := strings.TrimSpace(l.Detail + "\n" + l.CheckOutput)
	if len(l.ClearedLocks) > 0 {
		d = strings.TrimSpace("removed stale git locks left by a killed git: " + strings.Join(l.ClearedLocks, ", ") + "\n" + d)
	}
	return d
}
