package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// waitingRetry is how often a landing that waits for a clean checkout is tried again.
const waitingRetry = 10 * time.Second

// landQueueLimit is how many missions of the landing queue one tick reads (oldest first);
// the next tick reads the rest.
const landQueueLimit = 400

// landQueue hands completed missions whose landing can go on to one landing worker per
// repository and target branch, in the background so that a slow merge or check never holds
// up the tick: review first when required, then the repository's landing policy, then the
// landing with the repository's checks. Within one branch missions land one at a time (the
// workspace manager serialises per branch across processes too).
func (s *Scheduler) landQueue(ctx context.Context, _ *TickReport) error {
	queue, err := s.eng.LandingQueue(ctx, landQueueLimit)
	if err != nil {
		return err
	}
	groups := map[string][]engine.Mission{}
	var keys []string
	for _, m := range queue {
		k := m.Repository + "\x00" + s.targetBranch(&m)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], m)
	}
	for _, k := range keys {
		s.landGroup(ctx, k, groups[k])
	}
	return nil
}

// landGroup starts the landing worker of one branch unless it already runs (the next tick
// picks up what it did not take).
func (s *Scheduler) landGroup(ctx context.Context, key string, ms []engine.Mission) {
	s.mu.Lock()
	if s.landing == nil {
		s.landing = map[string]bool{}
	}
	busy := s.landing[key]
	s.landing[key] = true
	s.mu.Unlock()
	if busy {
		return
	}
	s.background(func() {
		defer func() {
			s.mu.Lock()
			delete(s.landing, key)
			s.mu.Unlock()
			s.Wake()
		}()
		var ready []readyLanding
		for i := range ms {
			// The list was read before this worker started, maybe while the previous worker
			// of the branch still landed some of it: read each mission again, so that a
			// landing already done (or sent to repair) is not run a second time. Not the
			// tick's context (a tick ends long before a landing), but the one Stop cancels: a
			// shutdown interrupts a landing (a long check) rather than waiting for it, and the
			// next leader lands the mission again from scratch (landing is idempotent per
			// mission and attempt; an interrupted check is not a failed one).
			m, ok, err := s.stillLandable(s.stopCtx, ms[i].ID)
			if err == nil && ok {
				var r readyLanding
				if r, ok, err = s.landOne(s.stopCtx, &m); ok {
					ready = append(ready, r)
				}
			}
			if s.landFailed(ms[i].ID, err) {
				return
			}
		}
		for len(ready) > 0 {
			n := min(len(ready), worktree.MaxLandBatch)
			if err := s.landBatch(s.stopCtx, ready[:n]); s.landFailed(ready[0].m.ID, err) {
				return
			}
			ready = ready[n:]
		}
	})
}

// landFailed logs a landing's error and says whether the worker should stop (a shutdown).
func (s *Scheduler) landFailed(id string, err error) bool {
	switch {
	case err != nil && s.stopCtx.Err() != nil:
		s.log.Info("landing interrupted by shutdown; the next leader lands it", "mission_id", id)
		return true
	case err != nil:
		s.log.Error("landing failed", "mission_id", id, "err", err)
	}
	return false
}

// readyLanding is a completed mission that passed review and the landing policy and whose
// workspace is to be landed.
type readyLanding struct {
	m   engine.Mission
	rec RunRecord
}

// stillLandable reads a mission again and says whether its landing is still for the landing
// queue (completed; landing pending, approved, review or waiting).
func (s *Scheduler) stillLandable(ctx context.Context, id string) (engine.Mission, bool, error) {
	d, err := s.eng.GetMission(ctx, id)
	if err != nil {
		return engine.Mission{}, false, err
	}
	m := d.Mission
	switch m.Landing {
	case engine.LandingPending, engine.LandingApproved, engine.LandingReview, engine.LandingWaiting:
		return m, m.State == engine.StateCompleted, nil
	}
	return m, false, nil
}

// landOne runs the gates before a landing (review when required, the landing policy, a
// workspace to land) and says whether the mission is ready to land.
func (s *Scheduler) landOne(ctx context.Context, m *engine.Mission) (readyLanding, bool, error) {
	if m.Landing == engine.LandingWaiting && !s.dueRetry(m.ID) {
		return readyLanding{}, false, nil
	}
	if m.Review == engine.ReviewRequired && m.Kind != engine.KindReview && m.Landing != engine.LandingApproved {
		s.setPhase(PhaseReviewing)
		approved, err := s.reviewGate(ctx, m)
		if err != nil || !approved {
			return readyLanding{}, false, err
		}
	}
	pol := s.cfg.policy(m.Repository)
	switch {
	case pol.Landing == LandingNone:
		_, err := s.eng.SetLanding(ctx, m.ID, engine.LandingLeft, "landing policy none: the branch is left for a person")
		return readyLanding{}, false, err
	case pol.Landing == LandingApproval && m.Landing != engine.LandingApproved:
		s.once(ctx, "approval:"+m.ID, engine.EscalationSpec{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID,
			Route: engine.RouteMainAgent, Kind: "approval", Reason: fmt.Sprintf("mission %s (%s) is ready to land and the repository's policy asks for approval", m.ID, m.Title),
			DecisionRequired: "approve the landing (approve_landing) after looking at get_mission_diff", SafeNextStep: "get_mission_diff " + m.ID})
		_, err := s.eng.SetLanding(ctx, m.ID, engine.LandingApproval, "landing policy approval")
		return readyLanding{}, false, err
	}
	rec, err := s.runWith(ctx, m)
	if err != nil {
		return readyLanding{}, false, err
	}
	if rec.Worktree.Branch == "" || rec.Worktree.ReadOnly {
		_, err := s.eng.RecordLanding(ctx, engine.Landing{MissionID: m.ID, Attempt: m.Attempt, Status: string(worktree.LandNothingToLand),
			Detail: "the attempt had no writable workspace"}, engine.LandingNotRequired)
		return readyLanding{}, false, err
	}
	return readyLanding{m: *m, rec: rec}, true, nil
}

// landBatch lands missions of one repository and target branch: alone with Land, several in
// one pass with LandBatch (the target moves once; see worktree.LandBatch), and records each
// outcome. A batch's duration is shared evenly among its missions in their landing records.
func (s *Scheduler) landBatch(ctx context.Context, ready []readyLanding) error {
	s.setPhase(PhaseMerging)
	repo, err := s.wt.Open(ready[0].m.Repository)
	if err != nil {
		return err
	}
	pol := s.cfg.policy(ready[0].m.Repository)
	reqs := make([]worktree.LandRequest, len(ready))
	for i, r := range ready {
		reqs[i] = worktree.LandRequest{Repo: repo, MissionID: r.m.ID, Attempt: r.m.Attempt, Workspace: r.rec.Worktree,
			TargetBranch: s.targetBranch(&r.m), WriteArea: r.m.WriteArea,
			Message: fmt.Sprintf("%s\n\nMission %s: %s", r.m.Title, r.m.ID, firstLine(r.m.Brief)), Check: s.checks(pol)}
	}
	started := time.Now()
	var out []worktree.BatchLanding
	if len(reqs) == 1 {
		l, err := s.wt.Land(ctx, reqs[0])
		out = []worktree.BatchLanding{{Landing: l, Err: err}}
	} else if out, err = s.wt.LandBatch(ctx, reqs); err != nil {
		return err
	}
	share := time.Since(started).Milliseconds() / int64(len(reqs))
	var errs []error
	for i := range ready {
		if err := s.recordLanding(ctx, &ready[i], out[i], share, pol); err != nil {
			if ctx.Err() != nil {
				return err
			}
			errs = append(errs, fmt.Errorf("mission %s: %w", ready[i].m.ID, err))
		}
	}
	return errors.Join(errs...)
}

// recordLanding records one landing's outcome: landed, waiting for a clean checkout (with an
// escalation to the person), or a conflict or failed checks (landingProblem).
func (s *Scheduler) recordLanding(ctx context.Context, r *readyLanding, b worktree.BatchLanding, durationMS int64, pol RepoPolicy) error {
	m, l, err := &r.m, b.Landing, b.Err
	target := s.targetBranch(m)
	if target == "" { // the repository's default, resolved when the workspace was made
		target = r.rec.Worktree.TargetBranch
	}
	if errors.Is(err, worktree.ErrUnresolvedConflicts) {
		l, err = worktree.Landing{Status: worktree.LandConflicted, Detail: err.Error()}, nil
	}
	if err != nil {
		return err
	}
	record := engine.Landing{MissionID: m.ID, Attempt: m.Attempt, Status: string(l.Status), TargetBranch: target,
		Commit: l.Commit, OldTarget: l.OldTarget, NewTarget: l.NewTarget, ChangedFiles: l.ChangedFiles,
		OutsideWriteArea: l.OutsideWriteArea, ConflictPaths: l.ConflictPaths, Detail: strings.TrimSpace(l.Detail + "\n" + l.CheckOutput),
		DurationMS: durationMS}
	switch l.Status {
	case worktree.LandLanded, worktree.LandAlreadyLanded, worktree.LandNothingToLand:
		state := engine.LandingLanded
		if l.Status == worktree.LandNothingToLand {
			state = engine.LandingNotRequired
		}
		if _, err := s.eng.RecordLanding(ctx, record, state); err != nil {
			return err
		}
		return s.carried(ctx, m)
	case worktree.LandWaiting:
		s.once(ctx, "checkout:"+m.ID, engine.EscalationSpec{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID, Route: engine.RoutePerson,
			Kind: "checkout", Reason: fmt.Sprintf("mission %s cannot land: the target is checked out in %s and local changes touch the same files", m.ID, l.Checkout),
			DecisionRequired: "commit, stash or discard the local changes in that checkout; the landing is retried by itself",
			Evidence:         append([]string{"checkout: " + l.Checkout}, l.BlockingFiles...), SafeNextStep: "git -C " + l.Checkout + " status"})
		_, err := s.eng.RecordLanding(ctx, record, engine.LandingWaiting)
		return err
	case worktree.LandConflicted, worktree.LandChecksFailed:
		return s.landingProblem(ctx, m, record, pol, l)
	}
	return fmt.Errorf("unexpected landing status %q", l.Status)
}

// landingProblem handles a conflict or failed checks: a repair mission (policy repair, and
// always for failed checks) or a block with an escalation (policy block).
func (s *Scheduler) landingProblem(ctx context.Context, m *engine.Mission, record engine.Landing, pol RepoPolicy, l worktree.Landing) error {
	why, details := "conflict", "The landing on "+record.TargetBranch+" conflicts in:\n- "+strings.Join(l.ConflictPaths, "\n- ")
	if l.Status == worktree.LandChecksFailed {
		why, details = "checks", "The repository's checks failed on the merged tree:\n\n"+tail(l.CheckOutput, 8000)
	}
	if why == "conflict" && pol.OnConflict == OnConflictBlock {
		if _, err := s.eng.RecordLanding(ctx, record, engine.LandingConflicted); err != nil {
			return err
		}
		s.once(ctx, "conflict:"+m.ID, engine.EscalationSpec{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID, Route: engine.RouteMainAgent,
			Kind: "conflict", Reason: fmt.Sprintf("mission %s (%s) conflicts with %s", m.ID, m.Title, record.TargetBranch),
			DecisionRequired: "resolve the conflict on the mission's branch by hand, or retry the mission on the new target",
			Evidence:         l.ConflictPaths, SafeNextStep: "get_mission_diff " + m.ID})
		return nil
	}
	depth, err := s.repairDepth(ctx, m)
	if err != nil {
		return err
	}
	if depth >= maxRepairChain {
		return s.repairsExhausted(ctx, m, record, why, details, depth)
	}
	s.setPhase(PhaseRepairing)
	if _, err := s.repair(ctx, m, why, details); err != nil {
		return err
	}
	_, err = s.eng.RecordLanding(ctx, record, engine.LandingRepair)
	return err
}

// maxRepairChain bounds a chain of repair missions: when the landing of a repair of a repair
// still conflicts or fails the checks, the scheduler asks for a decision instead of repairing
// the repair again (without a bound the chain never ends: each repair that changes nothing
// fails the same way and begets the next).
const maxRepairChain = 2

// repairDepth counts the repair missions in the chain that ends at m (m included).
func (s *Scheduler) repairDepth(ctx context.Context, m *engine.Mission) (int, error) {
	depth := 0
	for cur := m; cur.Kind == engine.KindRepair && cur.SubjectID != "" && depth < maxRepairChain; depth++ {
		d, err := s.eng.GetMission(ctx, cur.SubjectID)
		if err != nil {
			return 0, fmt.Errorf("repair chain of %s: %w", m.ID, err)
		}
		cur = &d.Mission
	}
	return depth, nil
}

// repairsExhausted stops a repair chain: the landing is recorded as conflicted and the Main
// Agent gets an escalation with the problem, like on_conflict = block.
func (s *Scheduler) repairsExhausted(ctx context.Context, m *engine.Mission, record engine.Landing, why, details string, depth int) error {
	if _, err := s.eng.RecordLanding(ctx, record, engine.LandingConflicted); err != nil {
		return err
	}
	what := map[string]string{"conflict": "conflicts with " + record.TargetBranch, "checks": "fails the repository's checks"}[why]
	s.once(ctx, "repairs:"+m.ID, engine.EscalationSpec{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID, Route: engine.RouteMainAgent,
		Kind: why, Reason: fmt.Sprintf("the work of mission %s (%s) still %s after %d repair missions", m.ID, m.Title, what, depth),
		DecisionRequired: "fix it by hand on the mission's branch, or cancel the work and dispatch it again with clearer instructions",
		Evidence:         []string{tail(details, 4000)}, SafeNextStep: "get_mission_diff " + m.ID})
	return nil
}

// carried marks the work a landed repair mission carried as landed too (its branch started
// from the subject's branch, so the subject's work is in it), up the chain of repairs.
func (s *Scheduler) carried(ctx context.Context, m *engine.Mission) error {
	for m.Kind == engine.KindRepair && m.SubjectID != "" {
		d, err := s.eng.GetMission(ctx, m.SubjectID)
		if err != nil {
			return err
		}
		subj := d.Mission
		if subj.State != engine.StateCompleted || subj.Landing.Satisfies() {
			return nil
		}
		if _, err := s.eng.SetLanding(ctx, subj.ID, engine.LandingLanded, "carried by repair mission "+m.ID); err != nil {
			return err
		}
		m = &subj
	}
	return nil
}

// dueRetry throttles retries of landings that wait for a clean checkout.
func (s *Scheduler) dueRetry(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retryAt == nil {
		s.retryAt = map[string]time.Time{}
	}
	now := s.cfg.Now()
	if now.Before(s.retryAt[id]) {
		return false
	}
	s.retryAt[id] = now.Add(waitingRetry)
	return true
}
