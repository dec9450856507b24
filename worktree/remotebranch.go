package worktree

import (
	"context"
	"fmt"
)

// PrepareRemoteBranch makes an attempt's workspace on the repository's remote instead of on
// this node's disk, for an agent on another host (claim_mission with workspace
// "remote_branch"): the attempt's branch is created at its start — the fetched target tip, a
// repair's start point, a snapshot's commit — and pushed to the remote. The agent fetches
// Workspace.Branch from Workspace.RemoteURL, pushes its commits to it (never to another
// branch) and completes; FetchRemoteBranch then brings its work into this clone, and the
// landing lands the branch as it is (no directory is ever made: Workspace.Path is where one
// would be, absent). A snapshot (review, verify) is handed out the same way, read-only: the
// agent reads the branch and pushes nothing.
//
// Limits: a repair's target is not merged in for the agent (MergeTarget is ignored; the
// agent merges it itself), and Resume is ignored (a resumed attempt starts from its
// predecessor's branch tip, StartPoint). Errors: the repository is local (only a remote
// repository has a remote branch), the request's own errors as Prepare's, git's *GitError
// when the push fails.
func (m *Manager) PrepareRemoteBranch(ctx context.Context, req PrepareRequest) (Workspace, error) {
	if err := m.checkPrepare(&req); err != nil {
		return Workspace{}, err
	}
	if req.Repo.remote == nil {
		return Workspace{}, fmt.Errorf("prepare %s: %w: a remote branch needs a repository named by a git remote ([[repositories]] remote); this one is local", req.MissionID, ErrInvalidStrategy)
	}
	if req.Resume != nil && req.StartPoint == "" && req.Resume.Branch != "" {
		req.StartPoint = req.Resume.Branch
	}
	ws, err := m.remoteBranch(ctx, req)
	if err != nil {
		return Workspace{}, fmt.Errorf("prepare %s a%d: %w", req.MissionID, req.Attempt, err)
	}
	return ws, nil
}

func (m *Manager) remoteBranch(ctx context.Context, req PrepareRequest) (Workspace, error) {
	r := req.Repo
	if err := m.syncForPrepare(ctx, req); err != nil {
		return Workspace{}, err
	}
	target, err := targetOf(r, req.TargetBranch)
	if err != nil {
		return Workspace{}, err
	}
	rev := target
	switch req.Strategy {
	case StrategyWorktree, StrategyIsolatedCopy:
		if req.StartPoint != "" {
			rev = req.StartPoint
		}
	case StrategySnapshot:
		if req.SnapshotCommit != "" {
			rev = req.SnapshotCommit
		}
	default:
		return Workspace{}, fmt.Errorf("%w: a %q workspace cannot be a remote branch", ErrInvalidStrategy, req.Strategy)
	}
	base, err := r.resolveCommit(rev)
	if err != nil {
		return Workspace{}, err
	}
	path, err := m.workspacePath(r, req.MissionID, req.Attempt)
	if err != nil {
		return Workspace{}, err
	}
	branch := AttemptBranch(req.MissionID, req.Attempt)
	ws := m.newWorkspace(req, path, branch, base.String(), target)
	ws.Strategy, ws.ReadOnly, ws.RemoteURL = StrategyWorktree, req.Strategy == StrategySnapshot, r.remote.URL
	if ws.ReadOnly {
		ws.Strategy = StrategySnapshot
	}
	ref := "refs/heads/" + branch
	if !r.hasBranch(branch) {
		if _, err := m.git.run(ctx, r.root, runOpts{}, "update-ref", "-m", "mcp-scheduler: remote branch", "--end-of-options", ref, ws.BaseCommit, ""); err != nil {
			return Workspace{}, err
		}
	}
	if _, err := m.git.run(ctx, r.root, remoteOpts, "push", "--quiet", "--no-verify", "--end-of-options", r.remote.URL, "+"+ref+":"+ref); err != nil {
		return Workspace{}, fmt.Errorf("push %s to the remote %s: %w: %w", branch, r.remote.Name, ErrRemoteFailed, err)
	}
	return ws, nil
}

// FetchRemoteBranch brings the commits an agent pushed to a remote-branch workspace
// (PrepareRemoteBranch) into this clone, and returns the branch's tip. Errors wrap
// ErrNotPublished when the branch is not on the remote any more (deleted by hand), and carry
// git's *GitError otherwise.
func (m *Manager) FetchRemoteBranch(ctx context.Context, r *Repo, ws Workspace) (string, error) {
	if err := m.checkOpen(); err != nil {
		return "", err
	}
	if r.remote == nil || ws.RemoteURL == "" {
		return "", fmt.Errorf("fetch %s: %w: not a remote-branch workspace", ws.Branch, ErrInvalidStrategy)
	}
	if _, err := m.checkOwned(r, ws); err != nil {
		return "", err
	}
	if err := m.fetchPublished(ctx, r, ws.Branch); err != nil {
		return "", err
	}
	tip, err := r.branchTip(ws.Branch)
	if err != nil {
		return "", err
	}
	return tip.String(), nil
}
