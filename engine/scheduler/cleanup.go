package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// CleanupReport is what one repository's cleanup did.
type CleanupReport struct {
	Repository string                 `json:"repository"`
	Report     worktree.CleanupReport `json:"report"`
	Error      string                 `json:"error,omitempty"`
}

// Cleanup removes the workspaces and branches whose missions need them no more, in every
// repository with workspaces under the data dir (or only repo, when given): those of missions
// that landed (or were cancelled or purged), older than olderThan (0: the manager's
// retention). Failed, blocked, running, interrupted and unlanded missions keep theirs until a
// decision is recorded; dirty workspaces are never removed. A dry run changes nothing.
func (s *Scheduler) Cleanup(ctx context.Context, repo string, olderThan time.Duration, dryRun bool) ([]CleanupReport, error) {
	repos := []string{repo}
	if repo == "" {
		var err error
		if repos, err = s.wt.KnownRepositories(); err != nil {
			return nil, err
		}
	}
	keep := s.keeper(ctx)
	var out []CleanupReport
	var errs []error
	for _, path := range repos {
		r, err := s.wt.Open(path)
		if err != nil {
			out = append(out, CleanupReport{Repository: path, Error: err.Error()})
			errs = append(errs, err)
			continue
		}
		rep, err := s.wt.Cleanup(ctx, worktree.CleanupRequest{Repo: r, Keep: keep, OlderThan: olderThan, DryRun: dryRun})
		cr := CleanupReport{Repository: r.Root(), Report: rep}
		if err != nil {
			cr.Error = err.Error()
			errs = append(errs, fmt.Errorf("clean %s: %w", r.Root(), err))
		}
		if !dryRun {
			if err := s.recordRemoved(ctx, rep.Removed); err != nil {
				errs = append(errs, fmt.Errorf("clean %s: %w", r.Root(), err))
			}
		}
		out = append(out, cr)
	}
	return out, errors.Join(errs...)
}

// recordRemoved marks the workspace records of removed attempt checkouts removed (branches
// without a directory and pool checkouts have none).
func (s *Scheduler) recordRemoved(ctx context.Context, removed []worktree.CleanupEntry) error {
	var errs []error
	for _, e := range removed {
		if e.MissionID == "" || e.Path == "" {
			continue
		}
		if err := s.eng.WorkspaceRemoved(ctx, e.MissionID, e.Attempt); err != nil {
			errs = append(errs, fmt.Errorf("record workspace of %s attempt %d removed: %w", e.MissionID, e.Attempt, err))
		}
	}
	return errors.Join(errs...)
}

// keeper says which attempts must keep their workspace: every attempt of a mission that is
// not finished with a recorded decision (landed, nothing to land, left for a person,
// cancelled, purged). Lookups are cached for one cleanup.
func (s *Scheduler) keeper(ctx context.Context) func(missionID string, attempt int) bool {
	seen := map[string]bool{}
	return func(missionID string, _ int) bool {
		if k, ok := seen[missionID]; ok {
			return k
		}
		d, err := s.eng.GetMission(ctx, missionID)
		keep := true
		switch {
		case errors.Is(err, domain.ErrNotFound):
			keep = false // purged: its record is gone, a decision was made
		case err != nil:
			keep = true // when in doubt, keep
		case d.Mission.State == domain.StateCancelled:
			keep = false
		case d.Mission.State == domain.StateCompleted:
			keep = !d.Mission.Landing.Satisfies() // a branch left for a person (policy none) stays
		}
		seen[missionID] = keep
		return keep
	}
}

// maybeCleanup starts a background cleanup when CleanupEvery passed since the last one: the
// history retention (PruneHistory), then the workspaces.
func (s *Scheduler) maybeCleanup(ctx context.Context) {
	if s.cfg.CleanupEvery < 0 {
		return
	}
	now := s.cfg.Now()
	s.mu.Lock()
	due := now.Sub(s.lastCleanup) >= s.cfg.CleanupEvery && !s.cleaning
	if due {
		s.lastCleanup, s.cleaning = now, true
	}
	s.mu.Unlock()
	if !due {
		return
	}
	s.background(func() {
		defer func() { s.mu.Lock(); s.cleaning = false; s.mu.Unlock() }()
		s.scheduledPrune(ctx)
		reps, err := s.Cleanup(ctx, "", 0, false)
		removed := 0
		for _, r := range reps {
			removed += len(r.Report.Removed)
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("scheduled cleanup", "err", err)
		}
		if removed > 0 {
			s.log.Info("scheduled cleanup removed workspaces", "removed", removed)
		}
	})
}
