package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// cleanupHistory runs `cleanup --history`: the retention of [retention] by hand (olderThan
// 0: max_age of the configuration), and prints what went (or would go) and what stayed.
func (a *app) cleanupHistory(ctx context.Context, olderThan time.Duration, dryRun bool) error {
	if olderThan < 0 {
		return usageError{fmt.Errorf("--older-than %s: give a positive duration, e.g. 720h for 30 days", olderThan)}
	}
	if olderThan == 0 {
		olderThan = a.cfg.Retention.MaxAge.D()
		if olderThan == 0 {
			return usageError{fmt.Errorf("retention.max_age is 0 (keep all history): give --older-than to prune by hand, e.g. --older-than 720h")}
		}
	}
	if err := a.open(ctx); err != nil {
		return err
	}
	l, err := a.openLoop(ctx)
	if err != nil {
		return err
	}
	rep, perr := l.s.PruneHistory(ctx, olderThan, dryRun)
	if a.jsonOut {
		if err := writeJSON(a.out, rep); err != nil {
			return err
		}
		return perr
	}
	printHistoryReport(a, rep, dryRun)
	return perr
}

func printHistoryReport(a *app, rep scheduler.HistoryReport, dryRun bool) {
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	r := rep.Removed
	printShown(a.out, "history before %s: %s %d missions, %d voyages, %d events, %d attempts, %d landings, %d escalations, %d waves (%d batches)\n",
		rep.Before.Format(time.RFC3339), verb, r.Missions, r.Voyages, r.Events, r.Attempts, r.Landings, r.Escalations, r.Waves, rep.Batches)
	printShown(a.out, "attempt directories: %s %d (%s)\n", verb, rep.AttemptDirs, byteSize(rep.AttemptBytes))
	if len(rep.Kept) > 0 {
		var parts []string
		total := 0
		for why, n := range rep.Kept {
			if why == engine.KeepTooRecent {
				continue // not old enough: not a decision to keep
			}
			parts = append(parts, fmt.Sprintf("%s: %d", why, n))
			total += n
		}
		sort.Strings(parts)
		if total > 0 {
			printShown(a.out, "kept %d finished missions older than the cutoff (%s)\n", total, strings.Join(parts, "; "))
		}
	}
	for _, e := range rep.Errors {
		printShown(a.out, "error: %s\n", e)
	}
	if r.Missions > 0 && !dryRun {
		fmt.Fprintln(a.out, "their worktrees go with the next workspace cleanup (mcp-scheduler cleanup, or the running scheduler within the hour)")
	}
}
