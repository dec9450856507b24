package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// newEscalationsCmd lists, shows and resolves escalations: the blocker reports that wait for
// a decision (the CLI's list_escalations and resolve_escalation).
func newEscalationsCmd(a *app) *cobra.Command {
	list := newEscalationsListCmd(a)
	cmd := listsByDefault(&cobra.Command{Use: "escalations", Short: "List (the default), show and resolve escalations (what waits for a decision)"}, list)
	cmd.AddCommand(list, newEscalationsShowCmd(a), newEscalationsResolveCmd(a))
	return cmd
}

func newEscalationsListCmd(a *app) *cobra.Command {
	var f engine.EscalationFilter
	var all bool
	cmd := &cobra.Command{
		Use: "list", Short: "List open escalations (--all: resolved ones too), oldest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := firstError(checkLimit(f.Limit, 1000), checkOptionalID("mission_id", domain.PrefixMission, f.MissionID),
				checkOptionalID("voyage_id", domain.PrefixVoyage, f.VoyageID)); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			if !all {
				f.State = domain.EscalationOpen
			}
			es, err := a.eng.Escalations(cmd.Context(), f)
			if err != nil {
				return err
			}
			if a.jsonOut {
				if es == nil {
					es = []domain.Escalation{}
				}
				return writeJSON(a.out, es)
			}
			t := newTable(a.out, "ID", "STATE", "KIND", "ROUTE", "MISSIONS", "CREATED", "REASON")
			for _, e := range es {
				t.row(e.ID, e.State, e.Kind, e.Route, strings.Join(e.MissionIDs, " "), e.CreatedAt, cliText(e.Reason, escalationIDs(e)...))
			}
			return t.flush()
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&all, "all", false, "resolved escalations too")
	fl.StringVar(&f.MissionID, "mission", "", "only escalations about this mission")
	fl.StringVar(&f.VoyageID, "voyage", "", "only escalations of this voyage")
	fl.IntVar(&f.Limit, "limit", 100, "at most this many (1 to 1000)")
	return cmd
}

func newEscalationsResolveCmd(a *app) *cobra.Command {
	var action, note string
	cmd := &cobra.Command{
		Use:   "resolve ESCALATION_ID --action retry|skip|cancel|acknowledge",
		Short: "Close an escalation with a decision and apply it to the missions it blocked", Args: oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := firstError(domain.CheckID("escalation_id", domain.PrefixEscalation, args[0])); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			e, err := a.eng.ResolveEscalation(cmd.Context(), args[0], action, note, a.actor())
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.out, e)
			}
			err = printShown(a.out, "%s  %s  %s\n", e.ID, e.State, e.Resolution)
			return err
		},
	}
	cmd.Flags().StringVar(&action, "action", "", resolveActionsHelp())
	cmd.Flags().StringVar(&note, "note", "", "the decision, for the record (the next attempt's brief carries it on retry)")
	return cmd
}

// printMissionEscalations prints the open escalations about one mission (missions show).
func (a *app) printMissionEscalations(cmd *cobra.Command, id string) error {
	es, err := a.eng.Escalations(cmd.Context(), engine.EscalationFilter{State: domain.EscalationOpen, MissionID: id, Limit: 20})
	if err != nil {
		return err
	}
	for _, e := range es {
		a.printEscalationLine(e)
		for _, ev := range e.Evidence {
			printShown(a.out, "            evidence: %s\n", cut(cliText(ev, escalationIDs(e)...), 200))
		}
	}
	return nil
}

// printLandings prints a mission's landing records (missions show).
func (a *app) printLandings(ls []domain.Landing) error {
	if len(ls) == 0 {
		return nil
	}
	fmt.Fprintln(a.out)
	t := newTable(a.out, "ATTEMPT", "LANDING", "TARGET", "COMMIT", "AT", "CONFLICTS", "OUTSIDE WRITE AREA")
	for _, l := range ls {
		commit := l.Commit
		if len(commit) > 12 {
			commit = commit[:12]
		}
		t.row(l.Attempt, l.Status, l.TargetBranch, commit, l.At, strings.Join(l.ConflictPaths, " "), strings.Join(l.OutsideWriteArea, " "))
	}
	return t.flush()
}
