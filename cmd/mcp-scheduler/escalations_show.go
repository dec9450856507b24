package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// resolveActions are the decisions `escalations resolve --action` takes, each with what it
// does, in the order they are offered (the flag's help and `escalations show` print them).
var resolveActions = []struct{ name, what string }{
	{engine.ResolveRetry, "the blocked missions run again"},
	{engine.ResolveSkip, "give the blocked missions up without failing their voyage"},
	{engine.ResolveCancel, "cancel the blocked missions"},
	{engine.ResolveAcknowledge, "close the report only; the missions stay as they are"},
}

// resolveActionsHelp is the --action flag's help: each action with what it does.
func resolveActionsHelp() string {
	parts := make([]string, len(resolveActions))
	for i, r := range resolveActions {
		parts[i] = r.name + " (" + r.what + ")"
	}
	return strings.Join(parts, ", ")
}

func newEscalationsShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show ESCALATION_ID",
		Short: "Show an escalation: what it is about, its evidence, the decision it asks for and the commands that decide it",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := firstError(domain.CheckID("escalation_id", domain.PrefixEscalation, args[0])); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			e, err := a.eng.Escalation(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.out, e)
			}
			return a.printEscalation(e)
		},
	}
}

// printEscalation prints escalations show's text form: the fields, the evidence whole (one
// indented line per line), then the commands to run next.
func (a *app) printEscalation(e domain.Escalation) error {
	w, ids := a.out, escalationIDs(e)
	printShown(w, "%s  %s (kind %s, for %s)\n", e.ID, e.State, e.Kind, e.Route)
	printShown(w, "missions    %s\n", strings.Join(e.MissionIDs, " "))
	if e.VoyageID != "" {
		printShown(w, "voyage      %s\n", e.VoyageID)
	}
	if e.CauseID != "" {
		printShown(w, "caused by   %s\n", e.CauseID)
	}
	printShown(w, "created     %s\n", cellText(e.CreatedAt))
	if e.State == domain.EscalationResolved {
		printShown(w, "resolved    %s by %s: %s\n", cellText(e.ResolvedAt), cellText(e.ResolvedBy), cellText(e.Resolution))
	}
	printShown(w, "reason      %s\n", cliText(e.Reason, ids...))
	printShown(w, "decide      %s\n", cliText(e.DecisionRequired, ids...))
	if e.SafeNextStep != "" {
		printShown(w, "safe step   %s\n", cliText(e.SafeNextStep, ids...))
	}
	if len(e.Evidence) > 0 {
		fmt.Fprintln(w, "\nevidence:")
		for _, ev := range e.Evidence {
			printShown(w, "  - %s\n", strings.ReplaceAll(strings.TrimRight(cliText(ev, ids...), "\n"), "\n", "\n    "))
		}
	}
	err := printShown(w, "\nnext:\n%s", nextCommands(e))
	return err
}

// nextCommands are the command lines that act on e, one per line with what each does: the
// resolutions while it is open, then the commands that show what it is about.
func nextCommands(e domain.Escalation) string {
	var b strings.Builder
	if e.State == domain.EscalationOpen {
		for _, r := range resolveActions {
			fmt.Fprintf(&b, "  mcp-scheduler escalations resolve %s --action %s\n      %s\n", e.ID, r.name, r.what)
		}
		b.WriteString("      (add --note TEXT to record why; a retry's next attempt reads it)\n")
	}
	for _, id := range e.MissionIDs {
		fmt.Fprintf(&b, "  mcp-scheduler missions show %s\n", id)
	}
	if e.CauseID != "" && !slices.Contains(e.MissionIDs, e.CauseID) {
		fmt.Fprintf(&b, "  mcp-scheduler missions show %s\n      the mission whose failure caused it\n", e.CauseID)
	}
	if e.VoyageID != "" {
		fmt.Fprintf(&b, "  mcp-scheduler voyages show %s\n", e.VoyageID)
	}
	return b.String()
}

// escalationIDs are the ids an escalation's sentences may be about, to fill the commands'
// arguments (cliText): the escalation, its one mission (not when it blocks several), its
// voyage.
func escalationIDs(e domain.Escalation) []string {
	ids := []string{e.ID}
	if len(e.MissionIDs) == 1 {
		ids = append(ids, e.MissionIDs[0])
	}
	if e.VoyageID != "" {
		ids = append(ids, e.VoyageID)
	}
	return ids
}

// printEscalationLine prints an open escalation on one line, as missions show and voyages
// show list them: id, kind, route, reason and the decision it asks for, with a pointer to
// escalations show.
func (a *app) printEscalationLine(e domain.Escalation) {
	ids := escalationIDs(e)
	printShown(a.out, "escalation  %s (%s, for %s): %s — decide: %s (mcp-scheduler escalations show %s)\n",
		e.ID, e.Kind, e.Route, cliText(e.Reason, ids...), cliText(e.DecisionRequired, ids...), e.ID)
}
