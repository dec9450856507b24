package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools/watch"
)

func newMissionsCmd(a *app) *cobra.Command {
	list := newMissionsListCmd(a)
	cmd := listsByDefault(&cobra.Command{Use: "missions", Short: "List (the default), show, update, cancel and retry missions"}, list)
	cmd.AddCommand(list, newMissionsShowCmd(a), newMissionsUpdateCmd(a), newMissionsCancelCmd(a), newMissionsRetryCmd(a))
	return cmd
}

// listsByDefault makes a command group run its list subcommand when given no subcommand
// (`mcp-scheduler missions` is `mcp-scheduler missions list`), with the same flags.
func listsByDefault(group, list *cobra.Command) *cobra.Command {
	group.Args = cobra.NoArgs // a word that is no subcommand is refused as an unknown command
	group.Flags().AddFlagSet(list.Flags())
	group.RunE = list.RunE
	return group
}

func newMissionsListCmd(a *app) *cobra.Command {
	var states []string
	var voyage, cursor string
	var limit int
	cmd := &cobra.Command{
		Use: "list", Short: "List missions, oldest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := engine.MissionFilter{VoyageID: voyage, Cursor: cursor, Limit: limit}
			for _, s := range states {
				f.States = append(f.States, domain.MissionState(s))
			}
			if err := firstError(checkLimit(limit, 1000), f.Check(), checkOptionalID("cursor", domain.PrefixMission, cursor)); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			ms, err := a.eng.ListMissions(cmd.Context(), f)
			if err != nil {
				return err
			}
			if a.jsonOut {
				if ms == nil {
					ms = []domain.Mission{}
				}
				return writeJSON(a.out, ms)
			}
			t := newTable(a.out, "ID", "STATE", "LANDING", "PRIO", "ATTEMPT", "OWNER", "UPDATED", "TITLE")
			for _, m := range ms {
				owner := ""
				if m.State.Leased() {
					owner = m.Lease.Owner
				}
				t.row(m.ID, m.State, m.Landing, m.Priority, m.Attempt, owner, m.UpdatedAt, m.Title)
			}
			if err := t.flush(); err != nil {
				return err
			}
			if len(ms) == limit && limit > 0 {
				printShown(a.err, "more: --cursor %s\n", ms[len(ms)-1].ID)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&states, "state", nil, "only missions in this state (repeatable): pending, leased, running, interrupted, completed, failed, blocked, cancelled")
	f.StringVar(&voyage, "voyage", "", "only missions of this voyage")
	f.IntVar(&limit, "limit", 100, "at most this many (1 to 1000)")
	f.StringVar(&cursor, "cursor", "", "continue after this mission id")
	return cmd
}

func newMissionsShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use: "show MISSION_ID", Short: "Show a mission, why it is not running, its open escalations, attempts, workspaces and landings", Args: oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := firstError(domain.CheckID("mission_id", domain.PrefixMission, args[0])); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			d, err := a.eng.GetMission(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.out, d)
			}
			m := d.Mission
			w := a.out
			printShown(w, "%s  %s\n", m.ID, m.Title)
			printShown(w, "state       %s (attempt %d, landing %s)\n", m.State, m.Attempt, m.Landing)
			if d.LandingReason != "" {
				printShown(w, "landing     %s: %s\n", m.Landing, cliText(d.LandingReason, m.ID))
			}
			printShown(w, "priority    %d   kind %s   review %s   retry budget %d (used %d)\n", m.Priority, m.Kind, m.Review, m.RetryBudget, m.AttemptsUsed)
			printShown(w, "repository  %s\n", m.Repository)
			printMissionBudget(w, d)
			if m.VoyageID != "" {
				printShown(w, "voyage      %s\n", watch.VoyageOf(m.VoyageID, m.Key))
			}
			if len(m.WriteArea) > 0 {
				printShown(w, "write area  %s\n", strings.Join(m.WriteArea, ", "))
			}
			if m.State.Leased() {
				printShown(w, "lease       %s%s, epoch %d, expires %s\n", m.Lease.Owner, authenticatedText(m.Run), m.Lease.Epoch, cellText(m.Lease.ExpiresAt))
			}
			if m.Decision != nil {
				printShown(w, "decision    %s: %s\n", m.Decision.Kind, cliText(m.Decision.Reason, m.ID, m.VoyageID))
			}
			if m.Abandons > 0 {
				printShown(w, "abandoned   %d attempt(s) in a row: claimed, then never heard from (no budget spent)\n", m.Abandons)
			}
			for _, r := range d.WhyNotRunning {
				printShown(w, "waiting     %s: %s%s\n", r.Code, cliText(r.Message, m.ID, m.VoyageID), sinceText(r.Since))
			}
			for _, dep := range d.DependsOn {
				printShown(w, "depends on  %s (%s)\n", dep.DependsOn, dep.Type)
			}
			if err := a.printMissionEscalations(cmd, m.ID); err != nil {
				return err
			}
			printShown(w, "\nbrief:\n%s\n", m.Brief)
			if len(d.Attempts) > 0 {
				fmt.Fprintln(w)
				t := newTable(w, "ATTEMPT", "AGENT", "OUTCOME", "ENDED", "SUMMARY")
				for _, at := range d.Attempts {
					t.row(at.Attempt, at.Agent, at.Outcome, at.EndedAt, cliText(attemptSummary(at), m.ID, m.VoyageID))
				}
				if err := t.flush(); err != nil {
					return err
				}
			}
			if err := a.printWorkspaces(d.Workspaces); err != nil {
				return err
			}
			return a.printLandings(d.Landings)
		},
	}
}

func newMissionsCancelCmd(a *app) *cobra.Command {
	var reason string
	var skip bool
	cmd := &cobra.Command{
		Use: "cancel MISSION_ID", Short: "Cancel a mission (a running attempt is stopped)", Args: oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := firstError(domain.CheckID("mission_id", domain.PrefixMission, args[0])); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			m, err := a.eng.Cancel(cmd.Context(), args[0], reason, skip, a.actor())
			return a.printMission(m, err)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the event log")
	cmd.Flags().BoolVar(&skip, "skip", false, "give up on it without failing its voyage")
	return cmd
}

func newMissionsRetryCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use: "retry MISSION_ID", Short: "Reopen a failed, blocked or cancelled mission", Args: oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := firstError(domain.CheckID("mission_id", domain.PrefixMission, args[0])); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			m, err := a.eng.Retry(cmd.Context(), args[0], a.actor())
			return a.printMission(m, err)
		},
	}
}

func (a *app) printMission(m domain.Mission, err error) error {
	if err != nil {
		return err
	}
	if a.jsonOut {
		return writeJSON(a.out, m)
	}
	err = printShown(a.out, "%s  %s  %s\n", m.ID, m.State, m.Title)
	return err
}

// sinceText says since when a mission waits for a reason ("" when not known).
func sinceText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return " (since " + cellText(t) + ")"
}

// printWorkspaces lists the attempts' workspace records: where each attempt worked, on which
// branch from which commit, and whether cleanup removed the checkout.
func (a *app) printWorkspaces(ws []engine.WorkspaceRecord) error {
	if len(ws) == 0 {
		return nil
	}
	fmt.Fprintln(a.out)
	t := newTable(a.out, "ATTEMPT", "WORKSPACE", "BRANCH", "BASE", "STATE")
	for _, w := range ws {
		state := w.State
		if w.State == engine.WorkspaceRemoved {
			state += " " + cellText(w.RemovedAt)
		}
		t.row(w.Attempt, w.Path, w.Branch, shortCommit(w.BaseCommit), state)
	}
	return t.flush()
}

// shortCommit is the first 12 hex digits of a commit id.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// attemptSummary is an attempt's line in missions show: a failure's kind with whichever summary
// exists (the failure's own, else the attempt's, else its diagnostic), never a bare "kind: ".
func attemptSummary(at domain.Attempt) string {
	if at.Failure == nil {
		return at.Summary
	}
	for _, s := range []string{at.Failure.Summary, at.Summary, at.Failure.Diagnostic} {
		if strings.TrimSpace(s) != "" {
			return at.Failure.Kind + ": " + s
		}
	}
	return at.Failure.Kind
}
