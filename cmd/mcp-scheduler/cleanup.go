package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func newCleanupCmd(a *app) *cobra.Command {
	var olderThan time.Duration
	var dryRun, history bool
	var repo string
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove the worktrees and branches of missions that landed (failed and unlanded work is kept)",
		Long: "Remove the workspaces and branches whose missions need them no more: landed, cancelled or purged\n" +
			"missions older than --older-than. Failed, blocked, running, interrupted and unlanded missions keep\n" +
			"theirs until a decision is recorded; workspaces with uncommitted changes are never removed. Stale\n" +
			"registrations (directories deleted by hand) are pruned. The running scheduler does the same every hour.\n\n" +
			"With --history it prunes the history instead: finished missions older than [retention] max_age (or\n" +
			"--older-than), with their events, attempts, landings and attempt directories, and finished voyages left\n" +
			"without missions. Unfinished voyages and missions, and what they still need, are never pruned. The running\n" +
			"scheduler does this every hour too.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if history {
				if repo != "" {
					return usageError{fmt.Errorf("--repo does not apply to --history: history is pruned for every repository")}
				}
				if !cmd.Flags().Changed("older-than") {
					olderThan = 0 // the configured retention
				}
				return a.cleanupHistory(cmd.Context(), olderThan, dryRun)
			}
			return a.cleanup(cmd.Context(), repo, olderThan, dryRun)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&olderThan, "older-than", 24*time.Hour, "only remove workspaces whose last activity is older (with --history: missions finished longer ago; default [retention] max_age)")
	f.BoolVar(&dryRun, "dry-run", false, "report what would be removed and change nothing")
	f.BoolVar(&history, "history", false, "prune finished history older than [retention] max_age instead of workspaces")
	f.StringVar(&repo, "repo", "", "only this repository (default: every repository with workspaces in the data dir)")
	return cmd
}

func (a *app) cleanup(ctx context.Context, repo string, olderThan time.Duration, dryRun bool) error {
	if olderThan <= 0 {
		// the cleaner reads 0 as its default (24 h): refuse rather than keep everything silently
		return usageError{fmt.Errorf("--older-than %s: give a positive duration (1s removes every eligible workspace now)", olderThan)}
	}
	if err := a.open(ctx); err != nil {
		return err
	}
	l, err := a.openLoop(ctx)
	if err != nil {
		return err
	}
	reps, cerr := l.s.Cleanup(ctx, repo, olderThan, dryRun)
	if a.jsonOut {
		if err := writeJSON(a.out, reps); err != nil {
			return err
		}
		return cerr
	}
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	t := newTable(a.out, "REPOSITORY", "MISSION", "ATTEMPT", "ACTION", "REASON", "BYTES")
	for _, r := range reps {
		for _, e := range r.Report.Removed {
			t.row(r.Repository, e.MissionID, e.Attempt, verb, e.Reason, e.Bytes)
		}
		for _, e := range r.Report.Kept {
			t.row(r.Repository, e.MissionID, e.Attempt, "kept", e.Reason, "")
		}
		for _, p := range r.Report.Pruned {
			t.row(r.Repository, "", "", "pruned", p, "")
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	summary := "%s: workspaces use %s after cleanup (%s freed)\n"
	if dryRun {
		summary = "%s: workspaces would use %s after cleanup (%s would be freed)\n"
	}
	for _, r := range reps {
		for _, e := range r.Report.Kept {
			if e.Detail != "" { // why a workspace stays that its reason alone does not say
				printShown(a.out, "%s: %s a%d: %s\n", r.Repository, e.MissionID, e.Attempt, e.Detail)
			}
		}
		printShown(a.out, summary, r.Repository, byteSize(r.Report.DiskBytes), byteSize(r.Report.FreedBytes))
		if r.Error != "" {
			printShown(a.out, "%s: %s\n", r.Repository, r.Error)
		}
	}
	return cerr
}

func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
