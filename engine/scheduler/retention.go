package scheduler

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// DefaultRetention is how long finished history is kept (Config.Retention).
const DefaultRetention = 30 * 24 * time.Hour

// HistoryReport is what one history prune did: the engine's report plus the attempt
// directories (agent logs) of the pruned missions.
type HistoryReport struct {
	engine.PruneReport
	// AttemptDirs is how many <data dir>/attempts/<mission> directories were removed (would
	// be, in a dry run); AttemptBytes their size.
	AttemptDirs  int   `json:"attempt_dirs"`
	AttemptBytes int64 `json:"attempt_bytes"`
	// Errors are attempt directories that could not be removed (the records are gone; a
	// later prune does not see them again, so they are named here and in the log).
	Errors []string `json:"errors,omitempty"`
}

// PruneHistory removes the finished history older than maxAge (0: the configured
// retention; see engine.PruneHistory for what goes and what stays) and then the attempt
// directories of the missions it removed. Their worktrees go with the next workspace cleanup
// (a mission whose record is gone needs its workspace no more). A dry run changes nothing and
// reports what would go.
func (s *Scheduler) PruneHistory(ctx context.Context, maxAge time.Duration, dryRun bool) (HistoryReport, error) {
	return s.ws.PruneHistory(ctx, maxAge, dryRun)
}

// PruneHistory is Scheduler.PruneHistory.
func (ws *workspaces) PruneHistory(ctx context.Context, maxAge time.Duration, dryRun bool) (HistoryReport, error) {
	if maxAge == 0 {
		maxAge = ws.cfg.Retention
	}
	rep := HistoryReport{}
	if maxAge < 0 {
		return rep, errors.New("history retention is off (retention.max_age = 0): nothing is pruned")
	}
	var err error
	rep.PruneReport, err = ws.eng.PruneHistory(ctx, engine.PruneOptions{Before: ws.cfg.Now().Add(-maxAge),
		Batch: ws.cfg.RetentionBatch, Pause: ws.cfg.RetentionPause, DryRun: dryRun, Actor: "retention"})
	for _, id := range rep.Missions {
		dir, derr := ws.run.AttemptDir(id, 1)
		if derr != nil {
			rep.Errors = append(rep.Errors, derr.Error())
			continue
		}
		dir = filepath.Dir(dir) // <data dir>/attempts/<mission>
		n, ok := dirSize(dir)
		if !ok {
			continue // the mission never ran here, or its directory went earlier
		}
		if !dryRun {
			if rerr := os.RemoveAll(dir); rerr != nil {
				rep.Errors = append(rep.Errors, rerr.Error())
				ws.log.Warn("attempt directory of a pruned mission not removed", "mission", id, "dir", dir, "err", rerr)
				continue
			}
		}
		rep.AttemptDirs++
		rep.AttemptBytes += n
	}
	return rep, err
}

// dirSize sums the sizes of the files under dir; ok is false when dir does not exist.
func dirSize(dir string) (int64, bool) {
	if _, err := os.Lstat(dir); err != nil {
		return 0, false
	}
	var n int64
	// The walk function never returns an error, so neither does WalkDir: what it cannot read
	// (vanished meanwhile, unreadable) counts nothing.
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, ierr := d.Info(); ierr == nil {
				n += info.Size()
			}
		}
		return nil // a file that vanished meanwhile counts nothing
	})
	return n, true
}

// scheduledPrune runs the history retention as part of the leader's periodic cleanup, before
// the workspace cleanup (which then removes the pruned missions' worktrees too), and returns
// what it did (zero when Retention < 0); its error is logged.
func (ws *workspaces) scheduledPrune(ctx context.Context) HistoryReport {
	if ws.cfg.Retention < 0 || (ws.leads != nil && !ws.leads()) {
		return HistoryReport{}
	}
	start := time.Now()
	rep, err := ws.PruneHistory(ctx, 0, false)
	if err != nil && ctx.Err() == nil {
		ws.log.Warn("scheduled history prune", "err", err, "pruned_missions", rep.Removed.Missions)
	}
	kept := map[string]int{}
	for why, n := range rep.Kept {
		if why != engine.KeepTooRecent {
			kept[why] = n // old enough, kept by the rule: say why
		}
	}
	if rep.Removed != (engine.PruneCounts{}) || len(kept) > 0 {
		ws.log.Info("history pruned", "before", rep.Before, "missions", rep.Removed.Missions, "voyages", rep.Removed.Voyages,
			"events", rep.Removed.Events, "attempt_dirs", rep.AttemptDirs, "kept", kept, "batches", rep.Batches, "took", time.Since(start))
	}
	return rep
}
