package scheduler

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// ErrWorkspaceLost: an attempt's writable workspace was deleted before its work was
// committed, so there is nothing of it to land (shared/cases B17, for work that finished).
var ErrWorkspaceLost = errors.New("workspace lost")

// VerifyWorkspace checks, before a mission is reported completed, that its attempt's work
// still exists: the workspace directory, or commits on its branch. Read-only and shared
// workspaces (snapshot, main) always pass. ErrWorkspaceLost otherwise: completing would land
// nothing and lose the work silently, so the attempt should fail and run again.
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
	return fmt.Errorf("%w: %s was deleted before its work was committed", ErrWorkspaceLost, w.Path)
}
