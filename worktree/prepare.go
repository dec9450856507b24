package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// PrepareRequest asks for the workspace of one attempt.
type PrepareRequest struct {
	// Repo is the repository (required).
	Repo *Repo
	// MissionID ([A-Za-z0-9_-]{1,64}) and Attempt (1..MaxAttempt) name the attempt.
	MissionID string
	Attempt   int
	// Strategy defaults to StrategyWorktree.
	Strategy Strategy
	// TargetBranch is the branch the work will land on; its tip is the base. Default: the
	// repository's DefaultBranch.
	TargetBranch string
	// StartPoint, when set, is a commit id or branch to start from instead of the target tip
	// (repair missions start from the conflicting attempt's branch). Worktree and isolated copy
	// only.
	StartPoint string
	// MergeTarget, when true, merges the target tip into the new workspace right after
	// creation and leaves any conflict markers for the agent (Workspace.Conflicts names the
	// paths). Worktree and isolated copy only.
	MergeTarget bool
	// SnapshotCommit is the commit (id or branch) a snapshot shows. Default: the target tip.
	SnapshotCommit string
	// Resume continues in a predecessor's workspace instead of creating one (worktree and
	// isolated copy); if its directory was deleted but its branch survives, the checkout is
	// re-created on that branch. ErrWorkspaceGone when neither survives.
	Resume *Workspace
}

// Prepare returns the workspace for an attempt, creating it when needed. It is idempotent per
// (repository, mission, attempt): a second call returns the workspace the first one made. A
// stale registration or a directory deleted by hand is pruned and re-created (B17); a
// half-created worktree never stays behind (B18); ids and refs are validated before any git
// process runs and every path is checked to stay under DataDir (B31, B32). After creating it
// checks that HEAD is on the right branch at the base commit and that the tree is clean.
//
// Errors wrap ErrInvalidMissionID, ErrInvalidAttempt, ErrInvalidRef, ErrUnknownRef,
// ErrInvalidStrategy, ErrPathEscapes, ErrDetachedHead, ErrBranchCheckedOut, ErrWorkspaceGone
// or carry a *GitError.
func (m *Manager) Prepare(ctx context.Context, req PrepareRequest) (Workspace, error) {
	if err := m.checkPrepare(&req); err != nil {
		return Workspace{}, err
	}
	if err := m.syncForPrepare(ctx, req); err != nil {
		return Workspace{}, fmt.Errorf("prepare %s a%d: %w", req.MissionID, req.Attempt, err)
	}
	var ws Workspace
	var err error
	switch req.Strategy {
	case StrategyWorktree, StrategyIsolatedCopy:
		if req.SnapshotCommit != "" {
			return Workspace{}, fmt.Errorf("prepare %s: %w: SnapshotCommit is for snapshots", req.MissionID, ErrInvalidStrategy)
		}
		ws, err = m.prepareBranch(ctx, req)
	case StrategySnapshot, StrategyMain:
		if req.StartPoint != "" || req.MergeTarget || req.Resume != nil {
			return Workspace{}, fmt.Errorf("prepare %s: %w: %s takes no StartPoint, MergeTarget or Resume", req.MissionID, ErrInvalidStrategy, req.Strategy)
		}
		if req.Strategy == StrategyMain {
			ws, err = m.prepareMain(ctx, req)
		} else {
			ws, err = m.prepareSnapshot(ctx, req)
		}
	default:
		return Workspace{}, fmt.Errorf("prepare %s: %w: %q", req.MissionID, ErrInvalidStrategy, req.Strategy)
	}
	if err != nil {
		return Workspace{}, fmt.Errorf("prepare %s a%d: %w", req.MissionID, req.Attempt, err)
	}
	m.log.Debug("workspace ready", "mission_id", req.MissionID, "attempt", req.Attempt,
		"path", ws.Path, "strategy", string(ws.Strategy), "resumed", ws.Resumed, "from_pool", ws.FromPool)
	return ws, nil
}

// checkPrepare checks what Prepare and PrepareRemoteBranch need before anything runs: an
// open manager, a repository, a valid mission id and attempt; it defaults the strategy.
func (m *Manager) checkPrepare(req *PrepareRequest) error {
	if err := m.checkOpen(); err != nil {
		return err
	}
	if req.Repo == nil {
		return errors.New("prepare: Repo is required")
	}
	if err := ValidateMissionID(req.MissionID); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	if err := ValidateAttempt(req.Attempt); err != nil {
		return fmt.Errorf("prepare %s: %w", req.MissionID, err)
	}
	if req.Strategy == "" {
		req.Strategy = StrategyWorktree
	}
	return nil
}

// syncForPrepare fetches a remote repository's target before a workspace is made from it, so
// that the workspace starts from the remote's tip, and a scheduler branch it starts from that
// this clone lacks; a remote repository has no checkout of its
// own to lend (StrategyMain is refused). Nothing happens for a local repository.
func (m *Manager) syncForPrepare(ctx context.Context, req PrepareRequest) error {
	if req.Repo.remote == nil {
		return nil
	}
	if req.Strategy == StrategyMain {
		return fmt.Errorf("%w: the remote repository %s has no checkout of its own: use a worktree or snapshot workspace", ErrInvalidStrategy, req.Repo.remote.Name)
	}
	target, err := targetOf(req.Repo, req.TargetBranch)
	if err != nil {
		return err
	}
	if err := m.fetchTarget(ctx, req.Repo, target); err != nil {
		return err
	}
	// A repair's start point or a review's snapshot may be an attempt another node ran and
	// published (publish.go).
	for _, rev := range []string{req.StartPoint, req.SnapshotCommit} {
		if err := m.fetchSchedulerBranch(ctx, req.Repo, rev); err != nil {
			return err
		}
	}
	return nil
}

// targetOf returns the request's target branch (validated) or the default branch.
func targetOf(r *Repo, branch string) (string, error) {
	if branch == "" {
		return r.DefaultBranch()
	}
	return branch, ValidateBranchName(branch)
}

func (m *Manager) newWorkspace(req PrepareRequest, path, branch, base, target string) Workspace {
	return Workspace{
		Path: path, Branch: branch, BaseCommit: base, Strategy: req.Strategy,
		RepoID: req.Repo.id, MissionID: req.MissionID, Attempt: req.Attempt,
		TargetBranch: target, CreatedAt: m.cfg.Now().UTC().Truncate(time.Second),
	}
}

// prepareMain describes the repository's own checkout; nothing is created.
func (m *Manager) prepareMain(ctx context.Context, req PrepareRequest) (Workspace, error) {
	r := req.Repo
	ws := m.newWorkspace(req, r.root, "", "", "")
	ws.ReadOnly = true
	head, err := m.headOf(ctx, r, ws)
	if err != nil {
		return Workspace{}, err
	}
	ws.Branch, ws.BaseCommit, ws.TargetBranch = head.branch, head.commit, head.branch
	return ws, nil
}

// prepareSnapshot creates (or returns) a detached, read-only worktree of one commit.
func (m *Manager) prepareSnapshot(ctx context.Context, req PrepareRequest) (Workspace, error) {
	r := req.Repo
	target, err := targetOf(r, req.TargetBranch)
	if err != nil && req.SnapshotCommit == "" {
		return Workspace{}, err
	}
	rev := req.SnapshotCommit
	if rev == "" {
		rev = target
	}
	commit, err := r.resolveCommit(rev)
	if err != nil {
		return Workspace{}, err
	}
	path, err := m.workspacePath(r, req.MissionID, req.Attempt)
	if err != nil {
		return Workspace{}, err
	}
	ws := m.newWorkspace(req, path, "", commit.String(), target)
	ws.ReadOnly = true
	err = m.withStructure(ctx, r, func() error {
		if old, ok := m.intact(r, path); ok {
			if old.Strategy != StrategySnapshot {
				return fmt.Errorf("%w: attempt already has a %s workspace", ErrInvalidStrategy, old.Strategy)
			}
			ws = old
			return nil
		}
		if err := m.clearLeftovers(ctx, r, path, ""); err != nil {
			return err
		}
		_, err := m.git.run(ctx, r.root, runOpts{pointers: true}, "worktree", "add", "--detach", "--end-of-options", path, ws.BaseCommit)
		if err == nil {
			err = m.finishNew(ctx, r, &ws, ws.BaseCommit)
		}
		if err != nil {
			return errors.Join(err, m.discard(ctx, r, path, "", false))
		}
		return nil
	})
	return ws, err
}

// prepareBranch creates (or returns, or resumes) a workspace on the attempt's own branch.
func (m *Manager) prepareBranch(ctx context.Context, req PrepareRequest) (Workspace, error) {
	r := req.Repo
	if req.Resume != nil {
		return m.resume(ctx, req)
	}
	target, err := targetOf(r, req.TargetBranch)
	if err != nil {
		return Workspace{}, err
	}
	var base, targetTip string
	if tip, err := r.branchTip(target); err == nil {
		targetTip = tip.String()
	} else if req.StartPoint == "" || req.MergeTarget {
		return Workspace{}, err
	}
	base = targetTip
	if req.StartPoint != "" {
		h, err := r.resolveCommit(req.StartPoint)
		if err != nil {
			return Workspace{}, err
		}
		base = h.String()
	}
	path, err := m.workspacePath(r, req.MissionID, req.Attempt)
	if err != nil {
		return Workspace{}, err
	}
	branch := AttemptBranch(req.MissionID, req.Attempt)
	ws := m.newWorkspace(req, path, branch, base, target)
	err = m.withStructure(ctx, r, func() error {
		if old, ok := m.intact(r, path); ok {
			if old.Strategy != req.Strategy {
				return fmt.Errorf("%w: attempt already has a %s workspace", ErrInvalidStrategy, old.Strategy)
			}
			ws = old
			return nil
		}
		return m.createOnBranch(ctx, r, &ws, req, targetTip)
	})
	return ws, err
}

// intact returns the recorded workspace at path when its creation completed and its checkout
// still exists.
func (m *Manager) intact(r *Repo, path string) (Workspace, bool) {
	ws, ok := readMeta(path)
	if !ok || ws.RepoID != r.id {
		return Workspace{}, false
	}
	if _, err := gitDirOf(path); err != nil {
		return Workspace{}, false
	}
	return ws, true
}

// createOnBranch builds the checkout; the structural lock is held. Any failure removes every
// trace (directory, registration, branch when this call created it).
func (m *Manager) createOnBranch(ctx context.Context, r *Repo, ws *Workspace, req PrepareRequest, targetTip string) error {
	prior, hadMeta := readMeta(ws.Path)
	if err := m.clearLeftovers(ctx, r, ws.Path, ws.Branch); err != nil {
		return err
	}
	// A completed workspace whose directory was deleted by hand keeps its branch: re-create
	// the checkout on it so committed work survives (B17).
	if hadMeta && prior.Branch == ws.Branch && r.hasBranch(ws.Branch) {
		return m.recreate(ctx, r, ws, prior)
	}
	createdBranch := !r.hasBranch(ws.Branch)
	var err error
	switch {
	case req.Strategy == StrategyIsolatedCopy:
		err = m.createIsolated(ctx, r, ws)
		if err == nil {
			err = m.finishNew(ctx, r, ws, ws.BaseCommit)
		}
	default:
		err = m.createWorktree(ctx, r, ws)
	}
	if err == nil && req.MergeTarget {
		err = m.mergeTargetInto(ctx, ws, targetTip)
		if err == nil {
			err = m.fill(ctx, r, ws) // the merge wrote the target's LFS files as pointers and moved no submodule
		}
		if err == nil {
			err = writeMeta(*ws)
		}
	}
	if err != nil {
		return errors.Join(err, m.discard(ctx, r, ws.Path, ws.Branch, createdBranch))
	}
	return nil
}

// createWorktree claims a warm-pool checkout when one is ready and falls back to
// `git worktree add` when the pool is off or empty or the claimed checkout fails its checks.
func (m *Manager) createWorktree(ctx context.Context, r *Repo, ws *Workspace) error {
	claimed, err := m.claimFromPool(ctx, r, ws)
	if err != nil {
		return err
	}
	if claimed {
		err := m.finishNew(ctx, r, ws, ws.BaseCommit)
		if err == nil {
			return nil
		}
		m.log.Warn("warm pool checkout failed its checks; creating a fresh one", "path", ws.Path, "err", err)
		ws.FromPool = false
		if err := m.discard(ctx, r, ws.Path, ws.Branch, true); err != nil {
			return err
		}
	}
	if err := m.addWorktree(ctx, r, ws.Path, ws.Branch, ws.BaseCommit); err != nil {
		return err
	}
	return m.finishNew(ctx, r, ws, ws.BaseCommit)
}

// addWorktree runs `git worktree add -b <branch> <path> <base>`; when the branch exists (a
// leftover of an interrupted creation) it is reset with -B, which git refuses when the branch
// is checked out elsewhere (ErrBranchCheckedOut).
func (m *Manager) addWorktree(ctx context.Context, r *Repo, path, branch, base string) error {
	flag := "-b"
	if r.hasBranch(branch) {
		flag = "-B"
	}
	_, err := m.git.run(ctx, r.root, runOpts{pointers: true}, "worktree", "add", flag, branch, "--end-of-options", path, base)
	return checkedOutError(err)
}

// checkedOutError maps git's "already checked out" refusal to ErrBranchCheckedOut.
func checkedOutError(err error) error {
	if err == nil {
		return nil
	}
	msg := stderrOf(err)
	if strings.Contains(msg, "already checked out") || strings.Contains(msg, "already used by worktree") ||
		strings.Contains(msg, "is already checked out at") {
		return fmt.Errorf("%w: %w", ErrBranchCheckedOut, err)
	}
	return err
}

// recreate re-adds the checkout of a completed workspace on its surviving branch.
func (m *Manager) recreate(ctx context.Context, r *Repo, ws *Workspace, prior Workspace) error {
	tip, err := r.branchTip(prior.Branch)
	if err != nil {
		return err
	}
	if prior.Strategy == StrategyIsolatedCopy {
		err = m.cloneAt(ctx, r, prior.Path, prior.Branch, tip.String())
	} else {
		_, err = m.git.run(ctx, r.root, runOpts{pointers: true}, "worktree", "add", "--end-of-options", prior.Path, prior.Branch)
		err = checkedOutError(err)
	}
	*ws = prior
	ws.Resumed = true
	ws.Conflicts = nil
	if err == nil {
		err = m.finishNew(ctx, r, ws, tip.String())
	}
	if err != nil {
		return errors.Join(err, m.discard(ctx, r, prior.Path, prior.Branch, false))
	}
	m.log.Warn("re-created a workspace whose directory was gone", "mission_id", prior.MissionID,
		"attempt", prior.Attempt, "path", prior.Path)
	return nil
}

// finishNew fills in LFS content and submodules (fill.go), checks the post-conditions, copies
// the configured ignored files, notes the paths that differ only by case (noteShapes) and
// records the workspace.
func (m *Manager) finishNew(ctx context.Context, r *Repo, ws *Workspace, want string) error {
	if err := m.fill(ctx, r, ws); err != nil {
		return err
	}
	if err := m.verifyCheckout(ctx, r, *ws, want); err != nil {
		return err
	}
	if err := m.copyIgnored(ctx, r, ws.Path); err != nil {
		return err
	}
	if err := m.noteShapes(ctx, ws); err != nil {
		return err
	}
	return writeMeta(*ws)
}

// clearLeftovers removes what an interrupted or hand-damaged earlier creation left at path:
// a registration (stale, or locked "initializing"), a directory, a sidecar. The branch is kept
// (the caller decides). The structural lock is held.
func (m *Manager) clearLeftovers(ctx context.Context, r *Repo, path, branch string) error {
	registered, err := registeredAt(r, path)
	if err != nil {
		return err
	}
	if registered {
		m.log.Warn("removing leftover worktree registration", "path", path)
		return m.discard(ctx, r, path, branch, false)
	}
	if _, err := os.Lstat(path); err == nil {
		m.log.Warn("removing leftover workspace directory", "path", path)
		return m.discard(ctx, r, path, branch, false)
	}
	return nil
}

// resume continues in a predecessor's workspace.
func (m *Manager) resume(ctx context.Context, req PrepareRequest) (Workspace, error) {
	r := req.Repo
	prev := *req.Resume
	if prev.Strategy != StrategyWorktree && prev.Strategy != StrategyIsolatedCopy {
		return Workspace{}, fmt.Errorf("%w: cannot resume a %s workspace", ErrInvalidStrategy, prev.Strategy)
	}
	path, err := m.checkOwned(r, prev)
	if err != nil {
		return Workspace{}, err
	}
	if prev.Branch == "" {
		return Workspace{}, fmt.Errorf("%w: resumed workspace has no branch", ErrInvalidRef)
	}
	prev.Path = path
	err = m.withStructure(ctx, r, func() error {
		if _, err := gitDirOf(path); err == nil {
			return nil
		}
		if !r.hasBranch(prev.Branch) {
			return fmt.Errorf("%w: %s and its branch %s", ErrWorkspaceGone, path, prev.Branch)
		}
		if err := m.clearLeftovers(ctx, r, path, prev.Branch); err != nil {
			return err
		}
		ws := prev
		return m.recreate(ctx, r, &ws, prev)
	})
	if err != nil {
		return Workspace{}, err
	}
	prev.Resumed = true
	return prev, nil
}
