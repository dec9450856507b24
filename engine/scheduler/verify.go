package scheduler

import (
	"context"
	"os"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// VerifyWorkspace checks, before a mission is reported completed, that its attempt's work
// still exists: the workspace directory, or commits on its branch. Read-only and shared
// workspaces (snapshot, main) always pass. A *domain.WorkspaceLostError otherwise: completing
// would land nothing and lose the work silently, so the attempt should fail and run again.
// Managed completions (supervise.go) and pull-mode ones (claim.go, PullService.Complete) both
// obey it.
func (s *Scheduler) VerifyWorkspace(ctx context.Context, m *domain.Mission) error {
	rec, err := s.runWith(ctx, m)
	if err != nil {
		return err
	}
	return s.ws.verify(ctx, m.Repository, rec.Worktree)
}

// verify is VerifyWorkspace over a workspace already read.
func (ws *workspaces) verify(ctx context.Context, repository string, w worktree.Workspace) error {
	if w.Path == "" || w.ReadOnly || (w.Strategy != worktree.StrategyWorktree && w.Strategy != worktree.StrategyIsolatedCopy) {
		return nil
	}
	if _, err := os.Stat(w.Path); err == nil {
		return nil
	}
	if repo, err := ws.wt.Open(repository); err == nil && w.Branch != "" && w.BaseCommit != "" {
		if d, err := ws.wt.Diff(ctx, repo, w.BaseCommit, w.Branch); err == nil && len(d.Files) > 0 {
			return nil // the directory is gone but the work was committed on the branch
		}
	}
	return &domain.WorkspaceLostError{MissionID: w.MissionID, Attempt: w.Attempt, Path: w.Path}
}
