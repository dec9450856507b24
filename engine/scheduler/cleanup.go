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
	return s.ws.Cleanup(ctx, repo, olderThan, dryRun)
}

// Cleanup is Scheduler.Cleanup.
func (ws *workspaces) Cleanup(ctx context.Context, repo string, olderThan time.Duration, dryRun bool) ([]CleanupReport, error) {
	repos := []string{repo}
	if repo == "" {
		var err error
		if repos, err = ws.wt.KnownRepositories(); err != nil {
			return nil, err
		}
	}
	keep := ws.keeper(ctx)
	var out []CleanupReport
	var errs []error
	for _, path := range repos {
		r, err := ws.wt.Open(path)
		if err != nil {
			out = append(out, CleanupReport{Repository: path, Error: err.Error()})
			errs = append(errs, err)
			continue
		}
		rep, err := ws.wt.Cleanup(ctx, worktree.CleanupRequest{Repo: r, Keep: keep, OlderThan: olderThan, DryRun: dryRun})
		cr := CleanupReport{Repository: r.Name(), Report: rep}
		if err != nil {
			cr.Error = err.Error()
			errs = append(errs, fmt.Errorf("clean %s: %w", r.Name(), err))
		}
		if !dryRun {
			if err := ws.recordRemoved(ctx, rep.Removed); err != nil {
				errs = append(errs, fmt.Errorf("clean %s: %w", r.Name(), err))
			}
		}
		out = append(out, cr)
	}
	return out, errors.Join(errs...)
}

// recordRemoved marks the workspace records of removed attempt checkouts removed (branches
// without a directory and pool checkouts have none).
func (ws *workspaces) recordRemoved(ctx context.Context, removed []worktree.CleanupEntry) error {
	var errs []error
	for _, e := range removed {
		if e.MissionID == "" || e.Path == "" {
			continue
		}
		if err := ws.eng.WorkspaceRemoved(ctx, e.MissionID, e.Attempt); err != nil {
			errs = append(errs, fmt.Errorf("record workspace of %s attempt %d removed: %w", e.MissionID, e.Attempt, err))
		}
	}
	return errors.Join(errs...)
}

// keeper says which attempts must keep their workspace: every attempt of a mission that is
// not finished with a recorded decision (landed, nothing to land, left for a person,
// cancelled, purged). Lookups are cached for one cleanup.
func (ws *workspaces) keeper(ctx context.Context) func(missionID string, attempt int) bool {
	seen := map[string]bool{}
	return func(missionID string, _ int) bool {
		if k, ok := seen[missionID]; ok {
			return k
		}
		d, err := ws.eng.GetMission(ctx, missionID)
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
