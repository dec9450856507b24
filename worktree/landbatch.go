package worktree

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// MaxLandBatch is the most attempts LandBatch takes in one call.
const MaxLandBatch = 16

// BatchLanding is the outcome of one request of LandBatch: its Landing, or the error that
// stopped that request alone (the others went on).
type BatchLanding struct {
	Landing Landing
	Err     error
}

// LandBatch lands several attempts on one target branch in one pass, under one hold of the
// branch's landing lock: each attempt's pending work is committed (in parallel), each branch
// is merged in the object database on top of the previous one's result (fast-forward, or
// `git merge-tree --write-tree` + the merge commit, in request order), the checks run once on
// the final commit, and the target moves once (`git update-ref`, or `git merge --ff-only` in
// the checkout holding it). What Land spends per attempt on moving the target and on the
// person's checkout is spent once per batch.
//
// Outcomes per request are those of Land, with these differences: a conflicting attempt is
// left out and the batch goes on without it (conflicted, nothing of it moved). When the
// checks fail on the batch's result, or the checkout holding the target refuses to move to it
// (local changes touch incoming files), the attempts merged into it and those that conflicted
// with it are landed one by one with Land's own rules and the batch's checks, so that the
// verdict (checks_failed, waiting_for_clean_checkout) falls on the attempts that cause it and
// the others land; a lone attempt simply gets that verdict. OldTarget is the target before the batch and
// NewTarget after it for every landed attempt; Commit is the attempt's own merge commit (or
// its branch tip for a fast-forward).
//
// All requests must name the same repository and resolve to the same target branch, and at
// most MaxLandBatch of them; otherwise an error and nothing runs. A request that is invalid
// on its own (see Land) gets its error in its BatchLanding. The returned error is for what
// stops the whole batch (a cancelled context, the lock, a git failure moving the target).
// Check is taken from the first request that has one (a batch is one repository's policy).
// Crash safety is Land's: nothing moves before the single move of the target, and a repeated
// call after it finds each attempt already_landed.
func (m *Manager) LandBatch(ctx context.Context, reqs []LandRequest) ([]BatchLanding, error) {
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	target, err := m.checkBatch(reqs)
	if err != nil {
		return nil, fmt.Errorf("land batch: %w", err)
	}
	out := make([]BatchLanding, len(reqs))
	var live []int
	for i, req := range reqs {
		if _, err := m.checkLandRequest(req); err != nil {
			out[i].Err = fmt.Errorf("land %s a%d: %w", req.MissionID, req.Attempt, err)
			continue
		}
		if repeats(reqs[:i], req) {
			out[i].Err = fmt.Errorf("land %s a%d: an earlier request of the batch lands the same attempt", req.MissionID, req.Attempt)
			continue
		}
		live = append(live, i)
	}
	if len(live) == 0 {
		return out, nil
	}
	r := reqs[live[0]].Repo
	release, err := m.locks.acquire(ctx, landKey(r.id, target))
	if err != nil {
		return nil, fmt.Errorf("land batch onto %s: %w", target, err)
	}
	defer release()
	start := time.Now()
	cleared, err := m.clearTargetLocks(ctx, r, target)
	if err != nil {
		return nil, fmt.Errorf("land batch onto %s: stale git locks: %w", target, err)
	}
	if live = m.fetchAllForLanding(ctx, reqs, live, out); len(live) == 0 {
		return out, nil
	}
	if live = m.commitPendingAll(ctx, reqs, live, out); len(live) == 0 {
		return out, nil
	}
	if err := m.landBatch(ctx, reqs, live, target, out); err != nil {
		return nil, fmt.Errorf("land batch onto %s: %w", target, err)
	}
	for _, i := range live {
		out[i].Landing.ClearedLocks = cleared
		if out[i].Err == nil {
			m.unpublishSettled(ctx, reqs[i], out[i].Landing.Status)
		}
		l := out[i].Landing
		m.log.Info("landing", "mission_id", reqs[i].MissionID, "attempt", reqs[i].Attempt, "target", target,
			"status", string(l.Status), "commit", l.Commit, "fast_forward", l.FastForward, "batch", len(live),
			"duration_s", time.Since(start).Seconds())
	}
	return out, nil
}

// repeats reports whether an earlier request names the same attempt.
func repeats(earlier []LandRequest, req LandRequest) bool {
	for _, prev := range earlier {
		if prev.MissionID == req.MissionID && prev.Attempt == req.Attempt {
			return true
		}
	}
	return false
}

// checkBatch checks that the requests share one repository and one target and returns it.
func (m *Manager) checkBatch(reqs []LandRequest) (string, error) {
	if len(reqs) == 0 || len(reqs) > MaxLandBatch {
		return "", fmt.Errorf("a batch holds 1 to %d requests, not %d", MaxLandBatch, len(reqs))
	}
	var target string
	for i, req := range reqs {
		if req.Repo == nil {
			return "", fmt.Errorf("request %d: Repo is required", i)
		}
		if req.Repo.id != reqs[0].Repo.id {
			return "", fmt.Errorf("request %d is for repository %s, the batch for %s", i, req.Repo.root, reqs[0].Repo.root)
		}
		name := req.TargetBranch
		if name == "" {
			name = req.Workspace.TargetBranch
		}
		t, err := targetOf(req.Repo, name)
		if err != nil {
			return "", fmt.Errorf("request %d: %w", i, err)
		}
		if i > 0 && t != target {
			return "", fmt.Errorf("request %d targets %s, the batch %s", i, t, target)
		}
		target = t
	}
	return target, nil
}

// commitPendingAll commits what the agents left uncommitted in every live request's
// workspace, in parallel (distinct worktrees; git's object writes are atomic), and fetches
// isolated copies' branches. It returns the requests still live; the others got their error.
// It runs before any branch tip is read (stageAll), and that order is what keeps an orphaned
// `git commit` of a killed landing from being missed: a clean status here means the branch
// already held the work, and a tip read later can only be newer. (Land, which runs its status
// beside the merge, needs pendingProbe.settleAt for the same guarantee.)
func (m *Manager) commitPendingAll(ctx context.Context, reqs []LandRequest, live []int, out []BatchLanding) []int {
	var wg sync.WaitGroup
	for _, i := range live {
		ws := reqs[i].Workspace
		if _, err := os.Stat(ws.Path); err != nil || reqs[i].Elsewhere {
			continue // gone (or another node's): landed as the branch is
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			step("batch.before-pending")
			_, err := m.commitPending(ctx, ws, reqs[i].Message)
			step("batch.pending-done")
			if err == nil && ws.Strategy == StrategyIsolatedCopy {
				err = m.fetchIsolated(ctx, reqs[i].Repo, ws)
			} else if err != nil {
				err = fmt.Errorf("commit pending work: %w", err)
			}
			if err != nil {
				out[i].Err = fmt.Errorf("land %s a%d: %w", reqs[i].MissionID, reqs[i].Attempt, err)
			}
		}()
	}
	wg.Wait()
	kept := live[:0]
	for _, i := range live {
		if out[i].Err == nil {
			kept = append(kept, i)
		}
	}
	return kept
}

// landBatch stages every live request on one reading of the target and moves the target once,
// starting over (at most maxLandTries times) when the target moved meanwhile.
func (m *Manager) landBatch(ctx context.Context, reqs []LandRequest, live []int, target string, out []BatchLanding) error {
	for range maxLandTries {
		again, err := m.landBatchOnce(ctx, reqs, live, target, out)
		if err != nil || !again {
			return err
		}
		m.log.Debug("target moved during a batch landing; starting over", "target", target, "batch", len(live))
	}
	return ErrTargetMoving
}

// landBatchOnce stages the requests against one reading of the target, runs the checks and
// moves the target; again=true when the target moved under it.
func (m *Manager) landBatchOnce(ctx context.Context, reqs []LandRequest, live []int, target string, out []BatchLanding) (again bool, err error) {
	r := reqs[live[0]].Repo
	if err := m.fetchTarget(ctx, r, target); err != nil {
		return false, err
	}
	oldH, err := r.branchTip(target)
	if err != nil {
		return false, err
	}
	cand, staged := m.stageAll(ctx, reqs, live, target, oldH, out)
	if len(staged) == 0 {
		return false, ctx.Err()
	}
	check := firstCheck(reqs)
	if done, err := m.checkBatchResult(ctx, reqs, live, staged, target, oldH, cand, check, out); err != nil || done {
		return false, err
	}
	move := Landing{Commit: cand.String(), BranchTip: cand.String(), OldTarget: oldH.String(), NewTarget: oldH.String()}
	moved, again, err := m.moveTarget(ctx, r, target, move)
	if err != nil || again {
		return again, err
	}
	if redo := redoAfterBatch(live, staged, out); moved.Status == LandWaiting && len(redo) > 1 {
		m.log.Info("the checkout holding the target refused a batch; landing its attempts one by one", "target", target,
			"checkout", moved.Checkout, "batch", len(redo))
		return false, m.landOneByOne(ctx, reqs, redo, target, check, out)
	}
	for _, i := range staged {
		l := &out[i].Landing
		l.Status, l.NewTarget, l.Checkout = moved.Status, moved.NewTarget, moved.Checkout
		if moved.Status == LandWaiting {
			l.BlockingFiles, l.Detail = moved.BlockingFiles, moved.Detail
		}
	}
	return false, nil
}

// stageAll stages every live request in order on top of the target's tip old and returns the
// batch's result and the requests merged into it; the others' outcomes are in out.
func (m *Manager) stageAll(ctx context.Context, reqs []LandRequest, live []int, target string, old plumbing.Hash, out []BatchLanding) (plumbing.Hash, []int) {
	cand := old
	var staged []int
	for _, i := range live {
		l, next, inBatch, err := m.stage(ctx, reqs[i], old, cand)
		out[i] = BatchLanding{Landing: l, Err: err}
		if err != nil {
			out[i].Err = fmt.Errorf("land %s a%d onto %s: %w", reqs[i].MissionID, reqs[i].Attempt, target, err)
		}
		if inBatch {
			staged = append(staged, i)
			cand = next
		}
	}
	return cand, staged
}

// checkBatchResult runs the checks (when there are) on the batch's result cand. done=true when
// they failed and out holds the final outcomes: checks_failed for a lone attempt, otherwise
// those of landing the attempts one by one.
func (m *Manager) checkBatchResult(ctx context.Context, reqs []LandRequest, live, staged []int, target string, old, cand plumbing.Hash,
	check func(context.Context, string) error, out []BatchLanding) (done bool, err error) {
	if check == nil {
		return false, nil
	}
	probe := Landing{Commit: cand.String(), OldTarget: old.String()}
	failed, err := m.runCheck(ctx, reqs[live[0]].Repo, target, &probe, check)
	if err != nil || !failed {
		return false, err
	}
	redo := redoAfterBatch(live, staged, out)
	if len(redo) == 1 && out[redo[0]].Landing.Status != LandConflicted {
		l := &out[redo[0]].Landing
		l.Status, l.CheckOutput = LandChecksFailed, probe.CheckOutput
		return true, nil
	}
	m.log.Info("checks failed on a batch landing; landing its attempts one by one", "target", target, "batch", len(redo))
	return true, m.landOneByOne(ctx, reqs, redo, target, check, out)
}

// redoAfterBatch lists, in request order, the requests to land again one by one when a
// batch's result cannot land as a whole (its checks fail, or the checkout holding the target
// refuses it): those merged into it, and those that conflicted with it (the attempt they
// conflicted with may be the one that never lands).
func redoAfterBatch(live, staged []int, out []BatchLanding) []int {
	inBatch := map[int]bool{}
	for _, i := range staged {
		inBatch[i] = true
	}
	var redo []int
	for _, i := range live {
		if inBatch[i] || (out[i].Err == nil && out[i].Landing.Status == LandConflicted) {
			redo = append(redo, i)
		}
	}
	return redo
}

// landOneByOne lands the requests redo one at a time with Land's rules (the lock is held) and
// the batch's checks, also for a request that set none, so that a failure or a refusal falls on
// the attempt that causes it and the others land.
func (m *Manager) landOneByOne(ctx context.Context, reqs []LandRequest, redo []int, target string,
	check func(context.Context, string) error, out []BatchLanding) error {
	for _, i := range redo {
		if err := ctx.Err(); err != nil {
			return err
		}
		req := reqs[i]
		req.Check = check
		l, err := m.land(ctx, req, target)
		out[i] = BatchLanding{Landing: l, Err: err}
		if err != nil {
			out[i].Err = fmt.Errorf("land %s a%d onto %s: %w", reqs[i].MissionID, reqs[i].Attempt, target, err)
		}
	}
	return nil
}

// firstCheck returns the first request's Check that is set.
func firstCheck(reqs []LandRequest) func(context.Context, string) error {
	for _, req := range reqs {
		if req.Check != nil {
			return req.Check
		}
	}
	return nil
}
