package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// voyageStates are the states `voyages list --state` takes, in lifecycle order.
var voyageStates = []domain.VoyageState{domain.VoyageOpen, domain.VoyageActive, domain.VoyageCompleted,
	domain.VoyageBlocked, domain.VoyageCancelled}

// newVoyagesCmd lists, shows and cancels voyages (the CLI's voyage_status and cancel_voyage,
// through the same engine operations). Voyages are dispatched from an MCP client.
func newVoyagesCmd(a *app) *cobra.Command {
	list := newVoyagesListCmd(a)
	cmd := listsByDefault(&cobra.Command{Use: "voyages", Short: "List (the default), show, update and cancel voyages"}, list)
	cmd.AddCommand(list, newVoyagesShowCmd(a), newVoyagesUpdateCmd(a), newVoyagesCancelCmd(a))
	return cmd
}

func newVoyagesListCmd(a *app) *cobra.Command {
	var states []string
	var limit int
	cmd := &cobra.Command{
		Use: "list", Short: "List voyages, newest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var ss []domain.VoyageState
			for _, s := range states {
				if !slices.Contains(voyageStates, domain.VoyageState(s)) {
					return usageError{fmt.Errorf("--state %q is not a voyage state: use open, active, completed, blocked or cancelled", s)}
				}
				ss = append(ss, domain.VoyageState(s))
			}
			if err := checkLimit(limit, 1000); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			vs, err := a.eng.Voyages(cmd.Context(), ss, limit)
			if err != nil {
				return err
			}
			if a.jsonOut {
				if vs == nil {
					vs = []domain.Voyage{}
				}
				return writeJSON(a.out, vs)
			}
			t := newTable(a.out, "ID", "STATE", "CREATED", "UPDATED", "COST", "TITLE")
			for _, v := range vs {
				t.row(v.ID, v.State, v.CreatedAt, v.UpdatedAt, costText(v.Usage.CostUSD), v.Title)
			}
			return t.flush()
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&states, "state", nil, "only voyages in this state (repeatable): open, active, completed, blocked, cancelled")
	f.IntVar(&limit, "limit", 100, "at most this many (1 to 1000)")
	return cmd
}

func newVoyagesShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use: "show VOYAGE_ID", Short: "Show a voyage: its state, each mission with its state, landing and why it waits, and its open escalations", Args: oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := firstError(domain.CheckID("voyage_id", domain.PrefixVoyage, args[0])); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			d, err := a.eng.VoyageStatus(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.out, d)
			}
			return a.printVoyage(d)
		},
	}
}

// printVoyage prints voyages show's text form.
func (a *app) printVoyage(d engine.VoyageDetail) error {
	v, w := d.Voyage, a.out
	printShown(w, "%s  %s\n", v.ID, v.Title)
	printShown(w, "state       %s   missions %s\n", v.State, countsText(d.Counts))
	printShown(w, "repository  %s\n", v.Repository)
	if v.Goal != "" {
		printShown(w, "goal        %s\n", cellText(v.Goal))
	}
	if v.Usage.CostUSD > 0 || v.CostLimitUSD > 0 {
		printShown(w, "cost        %s (limit %s)\n", costText(v.Usage.CostUSD), costText(v.CostLimitUSD))
	}
	for _, e := range d.Escalations {
		a.printEscalationLine(e)
	}
	if len(d.Missions) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	t := newTable(w, "ID", "KEY", "STATE", "LANDING", "PRIO", "ATTEMPT", "WHY / SUMMARY", "TITLE")
	for _, m := range d.Missions {
		why := cliText(m.Summary, m.ID, v.ID)
		if len(m.Why) > 0 {
			var parts []string
			for _, r := range m.Why {
				parts = append(parts, r.Code+": "+cliText(r.Message, m.ID, v.ID))
			}
			why = strings.Join(parts, "; ")
		}
		t.row(m.ID, m.Key, m.State, m.Landing, m.Priority, m.Attempt, why, m.Title)
	}
	return t.flush()
}

func newVoyagesCancelCmd(a *app) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use: "cancel VOYAGE_ID", Short: "Cancel a voyage: its unfinished missions are cancelled (running attempts stopped), landed work stays", Args: oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := firstError(domain.CheckID("voyage_id", domain.PrefixVoyage, args[0])); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			return a.printVoyageLine(a.eng.CancelVoyage(cmd.Context(), args[0], reason, a.actor()))
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the event log")
	return cmd
}

// countsText is "3: pending 2, completed 1" in the mission states' order ("0" for none).
func countsText(c map[domain.MissionState]int) string {
	total := 0
	var parts []string
	for _, s := range domain.AllStates() {
		if n := c[s]; n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%s %d", s, n))
		}
	}
	if total == 0 {
		return "0"
	}
	return fmt.Sprintf("%d: %s", total, strings.Join(parts, ", "))
}

// costText is a dollar figure ("-" for none).
func costText(usd float64) string {
	if usd == 0 {
		return "-"
	}
	return fmt.Sprintf("$%.4f", usd)
}

// printVoyageLine prints a voyage a command changed: one line (id, state, title), or its JSON with
// --json; err, when set, is returned as it is.
func (a *app) printVoyageLine(v domain.Voyage, err error) error {
	if err != nil {
		return err
	}
	if a.jsonOut {
		return writeJSON(a.out, v)
	}
	err = printShown(a.out, "%s  %s  %s\n", v.ID, v.State, v.Title)
	return err
}
