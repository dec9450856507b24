package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing"
)

// LandStatus is the outcome of a landing.
type LandStatus string

// Landing outcomes (design brief §6).
const (
	// LandLanded: the target branch now contains the attempt's work.
	LandLanded LandStatus = "landed"
	// LandAlreadyLanded: the attempt's branch tip was already in the target (a repeated call,
	// or a call after a crash that happened once the target had moved).
	LandAlreadyLanded LandStatus = "already_landed"
	// LandNothingToLand: the attempt changed nothing.
	LandNothingToLand LandStatus = "nothing_to_land"
	// LandConflicted: the three-way merge has conflicts (Landing.ConflictPaths); nothing moved.
	LandConflicted LandStatus = "conflicted"
	// LandChecksFailed: LandRequest.Check failed on the merged tree (Landing.CheckOutput);
	// nothing moved.
	LandChecksFailed LandStatus = "checks_failed"
	// LandWaiting: the target is checked out (Landing.Checkout) and git refused to
	// fast-forward it there, usually because local changes touch the same files
	// (Landing.BlockingFiles); nothing moved. Land again once the checkout is clean.
	LandWaiting LandStatus = "waiting_for_clean_checkout"
	// LandRefused: the attempt's branch adds or changes a symbolic link (mode 120000) whose
	// target points outside the repository (absolute, or climbing above the top level) and
	// that the target does not already track (Landing.EscapingLinks; Detail says what to do);
	// nothing moved (B68).
	LandRefused LandStatus = "refused"
)

// LandStatuses are every landing outcome above, in their order: for a list that names each
// (the landings_total metric exports every one, 0 included).
func LandStatuses() []LandStatus {
	return []LandStatus{LandLanded, LandAlreadyLanded, LandNothingToLand, LandConflicted, LandChecksFailed, LandWaiting, LandRefused}
}

// LandRequest asks to land one attempt.
type LandRequest struct {
	// Repo is the repository (required).
	Repo *Repo
	// MissionID and Attempt identify the attempt; they go into the merge commit's trailers
	// and the workspace's branch must belong to the mission.
	MissionID string
	Attempt   int
	// Workspace is the attempt's workspace (worktree or isolated copy). Its directory may be
	// gone: the branch is landed as it is then.
	Workspace Workspace
	// TargetBranch defaults to Workspace.TargetBranch, then to the repository's default.
	TargetBranch string
	// WriteArea lists doublestar globs ("internal/auth/**"); changed files outside every
	// pattern are reported in Landing.OutsideWriteArea (they do not stop the landing). Empty:
	// no write area, nothing reported.
	WriteArea []string
	// Message is the merge commit's subject and body, and the message of the commit of what
	// the agent left uncommitted (agents such as Claude Code and Codex never commit, so on a
	// fast-forward that commit is what the target's history shows); trailers "Mission-Id:" and
	// "Attempt:" are appended. Default "Land mission <id> attempt <n>" for the merge and
	// "Commit the work the agent left uncommitted" for the pending work.
	Message string
	// Check, when set, runs the repository's checks in a temporary detached checkout of the
	// merged commit (mergedTreeDir) while the branch lock is held; a non-nil error means the
	// checks failed: nothing moves and its text becomes Landing.CheckOutput.
	Check func(ctx context.Context, mergedTreeDir string) error
	// Elsewhere: the workspace is not this manager's (another scheduler node's data dir, in
	// cluster mode, whose node is gone): its directory is neither checked nor touched, and the
	// branch is landed as it is, like a workspace whose directory is gone.
	Elsewhere bool
	// Published: the attempt's branch was pushed to the repository's remote when it completed
	// (Publish; cluster mode). An Elsewhere landing fetches it from there first (an error
	// wrapping ErrNotPublished when it is not there), and a landing that settles the attempt
	// (landed, already_landed, nothing_to_land) deletes it from the remote afterwards.
	// Ignored for a local repository.
	Published bool
}

// Landing is the result of Land. Commit ids are full hex.
type Landing struct {
	// Status is the outcome.
	Status LandStatus `json:"status"`
	// Commit is what the target points at for this attempt: the merge commit, or the branch
	// tip for a fast-forward. For already_landed, the target commit that brought the tip in
	// (the tip itself when not found in the last 1000 first-parent commits). For
	// checks_failed, the candidate merge commit that was checked. Empty otherwise.
	Commit string `json:"commit,omitempty"`
	// BranchTip is the attempt branch's tip that was considered (after pending work was
	// committed).
	BranchTip string `json:"branch_tip,omitempty"`
	// OldTarget and NewTarget are the target before and after (equal unless landed).
	OldTarget string `json:"old_target,omitempty"`
	NewTarget string `json:"new_target,omitempty"`
	// FastForward is true when the target was simply moved to the branch tip.
	FastForward bool `json:"fast_forward,omitempty"`
	// ChangedFiles are the paths the attempt changed relative to the merge base (both names
	// of a rename), sorted.
	ChangedFiles []string `json:"changed_files,omitempty"`
	// OutsideWriteArea are the ChangedFiles matched by no LandRequest.WriteArea pattern.
	OutsideWriteArea []string `json:"outside_write_area,omitempty"`
	// ConflictPaths are the conflicting paths (conflicted).
	ConflictPaths []string `json:"conflict_paths,omitempty"`
	// Checkout is the checkout holding the target branch, when one does.
	Checkout string `json:"checkout,omitempty"`
	// BlockingFiles are the files in Checkout that stopped the fast-forward (waiting).
	BlockingFiles []string `json:"blocking_files,omitempty"`
	// EscapingLinks are the symbolic links that point outside the repository (refused).
	EscapingLinks []EscapingLink `json:"escaping_links,omitempty"`
	// CheckOutput is the failing check's message (checks_failed).
	CheckOutput string `json:"check_output,omitempty"`
	// Detail is git's own explanation for conflicted and waiting outcomes.
	Detail string `json:"detail,omitempty"`
	// ClearedLocks are the provably stale git lock files (real paths) this landing removed
	// from the checkout holding the target before it started: left by a git that was killed
	// (docs/workspaces.md, "Idempotency and crashes").
	ClearedLocks []string `json:"cleared_locks,omitempty"`
}

// maxLandTries bounds how often a landing starts over because the target moved under it.
const maxLandTries = 5

// Land lands an attempt's branch on the target branch, serialised per (repository, target)
// across goroutines and processes, and idempotent per attempt:
//
//  1. commit what the agent left uncommitted (CommitPending); fetch an isolated copy's branch;
//  2. when the branch tip is already in the target: already_landed (nothing_to_land when the
//     tip is still the base commit);
//  3. list the changed files and those outside the write area;
//  4. fast-forward when the target tip is on the branch tip's first-parent chain (not when a
//     merge of the target into the branch put it on a second parent: firstParentReaches); otherwise the merged
//     tree, from a go-git tree walk when no path changed on both sides and the merge base is
//     proven unique (trivialMergeTree), else from `git merge-tree --write-tree` (conflicts →
//     conflicted, nothing moves), and the merge
//     commit with both parents and the trailers, encoded here as `git commit-tree` would
//     write it (writeMerge; commit-tree itself where the configuration changes its bytes);
//  5. run Check on a temporary checkout of the result (failure → checks_failed);
//  6. move the target: `git update-ref <ref> <new> <old>` when no checkout holds it, else
//     `git merge --ff-only <new>` in that checkout (a refusal → waiting_for_clean_checkout).
//     A target that moved meanwhile makes the landing start over at 2 (ErrTargetMoving after
//     5 rounds). A remote repository's target (Remote) is fetched before step 2 of every
//     round and moved with a compare-and-set push instead; a push refused for another reason
//     than a moved target wraps ErrPushRefused with git's message.
//
// A crash before step 6 leaves the target untouched and the next call redoes the work; a crash
// after it makes the next call return already_landed. Errors are returned for invalid input
// (ErrInvalidMissionID, ErrInvalidRef, ErrReadOnlyWorkspace, ErrPathEscapes, ...), unresolved
// conflicts in the workspace (ErrUnresolvedConflicts), locks held too long (ErrLockBusy) and
// git failures (*GitError); outcomes such as conflicts are a Landing, not an error.
func (m *Manager) Land(ctx context.Context, req LandRequest) (Landing, error) {
	if err := m.checkOpen(); err != nil {
		return Landing{}, err
	}
	target, err := m.checkLandRequest(req)
	if err != nil {
		return Landing{}, fmt.Errorf("land %s a%d: %w", req.MissionID, req.Attempt, err)
	}
	release, err := m.locks.acquire(ctx, landKey(req.Repo.id, target))
	if err != nil {
		return Landing{}, fmt.Errorf("land %s a%d: %w", req.MissionID, req.Attempt, err)
	}
	defer release()
	start := time.Now()
	cleared, err := m.clearTargetLocks(ctx, req.Repo, target)
	if err != nil {
		return Landing{}, fmt.Errorf("land %s a%d onto %s: stale git locks: %w", req.MissionID, req.Attempt, target, err)
	}
	if err := m.fetchForLanding(ctx, req); err != nil {
		return Landing{ClearedLocks: cleared}, fmt.Errorf("land %s a%d onto %s: %w", req.MissionID, req.Attempt, target, err)
	}
	l, err := m.land(ctx, req, target)
	l.ClearedLocks = cleared
	if err != nil {
		return l, fmt.Errorf("land %s a%d onto %s: %w", req.MissionID, req.Attempt, target, err)
	}
	m.unpublishSettled(ctx, req, l.Status)
	m.log.Info("landing", "mission_id", req.MissionID, "attempt", req.Attempt, "target", target,
		"status", string(l.Status), "commit", l.Commit, "fast_forward", l.FastForward,
		"duration_s", time.Since(start).Seconds())
	return l, nil
}

// checkLandRequest validates the request before anything runs and returns the target branch.
func (m *Manager) checkLandRequest(req LandRequest) (string, error) {
	r, ws := req.Repo, req.Workspace
	if r == nil {
		return "", errors.New("Repo is required")
	}
	if err := ValidateMissionID(req.MissionID); err != nil {
		return "", err
	}
	if err := ValidateAttempt(req.Attempt); err != nil {
		return "", err
	}
	if ws.ReadOnly {
		return "", ErrReadOnlyWorkspace
	}
	if ws.Strategy != StrategyWorktree && ws.Strategy != StrategyIsolatedCopy {
		return "", fmt.Errorf("%w: cannot land a %q workspace", ErrInvalidStrategy, ws.Strategy)
	}
	// Another node's workspace of a remote repository names that node's clone: only the
	// remote is shared, and the caller opened it by the same name.
	if ws.RepoID != "" && ws.RepoID != r.id && !(req.Elsewhere && r.remote != nil) {
		return "", fmt.Errorf("%w: workspace belongs to repository %s", ErrPathEscapes, ws.RepoID)
	}
	if !req.Elsewhere {
		if _, err := m.checkOwned(r, ws); err != nil {
			return "", err
		}
	} else if err := ValidateBranchName(ws.Branch); err != nil {
		return "", err
	}
	if !strings.HasPrefix(ws.Branch, BranchPrefix+req.MissionID+"/a") {
		return "", fmt.Errorf("%w: branch %q does not belong to mission %s", ErrInvalidRef, ws.Branch, req.MissionID)
	}
	for _, p := range req.WriteArea {
		if !doublestar.ValidatePattern(p) {
			return "", fmt.Errorf("write area pattern %q is not a valid glob", p)
		}
	}
	target := req.TargetBranch
	if target == "" {
		target = ws.TargetBranch
	}
	return targetOf(r, target)
}

func (m *Manager) land(ctx context.Context, req LandRequest, target string) (Landing, error) {
	r, ws := req.Repo, req.Workspace
	var probe *pendingProbe
	if _, err := os.Stat(ws.Path); err == nil && !req.Elsewhere {
		if ws.Strategy == StrategyIsolatedCopy {
			if _, err := m.commitPending(ctx, ws, req.Message); err != nil {
				return Landing{}, fmt.Errorf("commit pending work: %w", err)
			}
			if err := m.fetchIsolated(ctx, r, ws); err != nil {
				return Landing{}, err
			}
		} else {
			// Look for uncommitted work while the merge is computed; nothing moves before
			// the answer is in.
			if probe, err = m.probePending(ctx, ws); err != nil {
				return Landing{}, fmt.Errorf("commit pending work: %w", err)
			}
			defer func() { probe.wait() }()
		}
	}
	for tries := 0; tries < maxLandTries; {
		l, again, err := m.landOnce(ctx, req, target, probe)
		if errors.Is(err, errBranchMoved) {
			// A git commit of a killed landing, orphaned and still running, finished while
			// this one looked: look at the workspace again before deciding anything.
			tries++
			m.log.Warn("attempt branch moved during landing; looking again", "mission_id", req.MissionID, "branch", ws.Branch)
			if probe, err = m.probePending(ctx, ws); err != nil {
				return Landing{}, fmt.Errorf("commit pending work: %w", err)
			}
			continue
		}
		if errors.Is(err, errPendingWork) {
			if _, err := probe.commit(ctx, m, ws, req.Message); err != nil {
				return Landing{}, fmt.Errorf("commit pending work: %w", err)
			}
			probe = nil
			continue
		}
		if !again {
			return l, err
		}
		tries++
		m.log.Debug("target moved during landing; starting over", "mission_id", req.MissionID, "target", target)
	}
	return Landing{}, ErrTargetMoving
}

// landOnce does steps 2–6 against one reading of the target; again=true means the target
// moved and the caller should start over. Before any outcome is final and before anything
// runs that is not a pure object write (checks, moving the target) the pending-work probe
// must have reported a clean workspace (errPendingWork otherwise) and the branch must still
// be at the tip the outcome was computed from (errBranchMoved otherwise).
func (m *Manager) landOnce(ctx context.Context, req LandRequest, target string, probe *pendingProbe) (l Landing, again bool, err error) {
	r := req.Repo
	if err := m.fetchTarget(ctx, r, target); err != nil {
		return l, false, err
	}
	oldH, err := r.branchTip(target)
	if err != nil {
		return l, false, err
	}
	l, _, staged, err := m.stage(ctx, req, oldH, oldH)
	if err != nil {
		return l, false, err
	}
	if err := probe.settleAt(r, req.Workspace.Branch, l.BranchTip); err != nil || !staged {
		return l, false, err
	}
	if req.Check != nil {
		if done, err := m.runCheck(ctx, r, target, &l, req.Check); err != nil || done {
			return l, false, err
		}
	}
	return m.moveTarget(ctx, r, target, l)
}

// stage does steps 2–4 of Land for one attempt: it merges the attempt's branch onto cand (the
// target's tip old, or for LandBatch old plus what the batch has merged so far) in the object
// database. inBatch=true when the attempt's fate follows the
// batch's move (next is then the new candidate); otherwise l is final (already_landed on the
// target itself, nothing_to_land, conflicted) or err says what went wrong.
func (m *Manager) stage(ctx context.Context, req LandRequest, old, cand plumbing.Hash) (l Landing, next plumbing.Hash, inBatch bool, err error) {
	r, ws := req.Repo, req.Workspace
	tipH, err := r.branchTip(ws.Branch)
	if err != nil {
		return l, cand, false, fmt.Errorf("%w: %w", ErrWorkspaceGone, err)
	}
	step("stage.tip-read")
	tip, c := tipH.String(), cand.String()
	l = Landing{BranchTip: tip, OldTarget: old.String(), NewTarget: old.String()}
	base, unique, err := m.baseOf(ctx, r, cand, tipH, ws.BaseCommit)
	if err != nil {
		return l, cand, false, err
	}
	if base == tip {
		return m.stagedAlready(ctx, r, l, old, cand, tipH, ws.BaseCommit)
	}
	// The changed files (go-git) and the merge (git) are independent: compute them at once.
	var paths []string
	changed := make(chan error, 1)
	go func() {
		var err error
		paths, err = r.changedPaths(ctx, base, tip)
		changed <- err
	}()
	merged := Landing{OldTarget: c, BranchTip: tip}
	var conflicted bool
	var mergeErr error
	ff := base == c
	if ff {
		ff, err = r.firstParentReaches(ctx, tip, c)
		if err != nil {
			return l, cand, false, fmt.Errorf("first-parent history of %s: %w", tip, err)
		}
	}
	if ff {
		merged.FastForward, merged.Commit = true, tip
	} else {
		proven := base
		if !unique {
			proven = ""
		}
		conflicted, mergeErr = m.mergeCommit(ctx, req, &merged, proven)
	}
	if err := <-changed; err != nil {
		return l, cand, false, err
	}
	l.ChangedFiles, l.OutsideWriteArea = paths, outsideWriteArea(paths, req.WriteArea)
	if len(paths) == 0 {
		l.Status = LandNothingToLand
		return l, cand, false, nil
	}
	links, err := r.escapingLinks(tipH, cand, paths)
	if err != nil {
		return l, cand, false, err
	}
	if len(links) > 0 {
		refuseLinks(&l, links)
		return l, cand, false, nil
	}
	if mergeErr != nil || conflicted {
		l.Status, l.ConflictPaths, l.Detail = merged.Status, merged.ConflictPaths, merged.Detail
		return l, cand, false, mergeErr
	}
	l.FastForward, l.Commit = merged.FastForward, merged.Commit
	return l, plumbing.NewHash(merged.Commit), true, nil
}

// baseOf returns the merge base of cand and tip, from go-git when it can tell, else git.
// unique=true when go-git proved it the only merge base (quickMergeBase); git's answer may be
// one of several.
func (m *Manager) baseOf(ctx context.Context, r *Repo, cand, tip plumbing.Hash, baseCommit string) (base string, unique bool, err error) {
	if mb, ok := r.quickMergeBase(cand, tip, plumbing.NewHash(baseCommit)); ok {
		return mb.String(), true, nil
	}
	base, err = m.mergeBase(ctx, r, cand.String(), tip.String())
	return base, false, err
}

// stagedAlready handles a branch tip already contained in the candidate: already_landed (or
// nothing_to_land) when the target itself holds it; in the batch when only an earlier
// attempt of the batch brought it in (a repair mission's branch carries its subject's work),
// so that it is landed only if the batch is.
func (m *Manager) stagedAlready(ctx context.Context, r *Repo, l Landing, old, cand, tip plumbing.Hash, baseCommit string) (Landing, plumbing.Hash, bool, error) {
	if tip.String() == baseCommit {
		l.Status = LandNothingToLand
		return l, cand, false, nil
	}
	inTarget := old == cand
	if !inTarget {
		base, _, err := m.baseOf(ctx, r, old, tip, baseCommit)
		if err != nil {
			return l, cand, false, err
		}
		inTarget = base == tip.String()
	}
	if inTarget {
		l.Status, l.Commit = LandAlreadyLanded, r.findLanding(old, tip)
		return l, cand, false, nil
	}
	l.Commit = r.findLanding(cand, tip)
	return l, cand, true, nil
}

// outsideWriteArea returns the paths no pattern matches (none when there are no patterns).
func outsideWriteArea(paths, area []string) []string {
	if len(area) == 0 {
		return nil
	}
	var out []string
	for _, p := range paths {
		inside := false
		for _, pat := range area {
			if ok, _ := doublestar.Match(pat, p); ok {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, p)
		}
	}
	return out
}
