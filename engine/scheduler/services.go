package scheduler

import (
	"context"
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// Brief renders the brief a pull-mode agent gets for its claimed mission.
func (s *Scheduler) Brief(ctx context.Context, m *domain.Mission) (string, error) {
	rec, err := s.runWith(ctx, m)
	if err != nil {
		return "", err
	}
	return s.renderBrief(m, rec.Worktree, true)
}

// Diff returns what a mission's current (or last) attempt changed: its workspace's base
// commit against its branch.
func (s *Scheduler) Diff(ctx context.Context, m *domain.Mission) (worktree.DiffResult, error) {
	rec, err := s.runWith(ctx, m)
	if err != nil {
		return worktree.DiffResult{}, err
	}
	if rec.Worktree.Branch == "" || rec.Worktree.BaseCommit == "" {
		return worktree.DiffResult{}, fmt.Errorf("mission %s has no workspace branch yet: %w", m.ID, domain.ErrNotFound)
	}
	repo, err := s.wt.Open(m.Repository)
	if err != nil {
		return worktree.DiffResult{}, err
	}
	return s.wt.Diff(ctx, repo, rec.Worktree.BaseCommit, rec.Worktree.Branch)
}

// Workspace returns the recorded workspace of m's current (or last) attempt: zero when none
// was recorded.
func (s *Scheduler) Workspace(ctx context.Context, m *domain.Mission) (worktree.Workspace, error) {
	rec, err := s.runWith(ctx, m)
	return rec.Worktree, err
}

// AttemptDir returns the directory holding an attempt's agent output files.
func (s *Scheduler) AttemptDir(missionID string, attempt int) (string, error) {
	return s.run.AttemptDir(missionID, attempt)
}
