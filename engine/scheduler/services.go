package scheduler

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// PrepareWorkspace is the engine.WorkspacePreparer of pull mode (claim_mission): it creates
// the claimed attempt's workspace, writes its brief (pull-mode wording) into
// .mcp-scheduler/brief.md and returns the run record to store.
func (s *Scheduler) PrepareWorkspace(ctx context.Context, m *domain.Mission) (engine.Workspace, json.RawMessage, error) {
	ws, err := s.prepare(ctx, m)
	if err != nil {
		return engine.Workspace{}, nil, err
	}
	rec := RunRecord{Mode: ModePull, Attempt: m.Attempt, Agent: m.Lease.Owner, Worktree: ws, LaunchedAt: s.cfg.Now()}
	brief, err := s.renderBrief(m, ws, true)
	if err != nil {
		return engine.Workspace{}, nil, err
	}
	if err := writeBrief(ws.Path, brief); err != nil {
		return engine.Workspace{}, nil, err
	}
	return rec.Workspace(), rec.raw(), nil
}

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
