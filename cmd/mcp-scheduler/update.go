package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// newMissionsUpdateCmd is update_mission for a person: it changes the fields whose flags are
// given, through the same engine operation (so the same checks and refusals), for example
// raising the budget a budget hold or escalation names.
func newMissionsUpdateCmd(a *app) *cobra.Command {
	var p engine.MissionPatch
	var title, brief, deadline string
	var priority, retryBudget int
	var costLimit float64
	var tokenLimit int64
	cmd := &cobra.Command{
		Use:     "update MISSION_ID [--cost-limit-usd X] [--token-limit N] [--priority P] [--deadline TIME] …",
		Short:   "Change a mission: its budgets, priority, deadline, retry budget, title or brief (only the flags given)",
		Example: "  mcp-scheduler missions update " + domain.PrefixMission + "_01J… --cost-limit-usd 2.50 --token-limit 500000",
		Args:    oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := firstError(domain.CheckID("mission_id", domain.PrefixMission, args[0])); err != nil {
				return err
			}
			f := cmd.Flags()
			setIf(f, "title", &p.Title, title)
			setIf(f, "brief", &p.Brief, brief)
			setIf(f, "priority", &p.Priority, priority)
			setIf(f, "retry-budget", &p.RetryBudget, retryBudget)
			setIf(f, "cost-limit-usd", &p.CostLimitUSD, costLimit)
			setIf(f, "token-limit", &p.TokenLimit, tokenLimit)
			if f.Changed("deadline") {
				t, err := time.Parse(time.RFC3339, deadline)
				if err != nil {
					return usageError{fmt.Errorf("--deadline: %q is not a time: give it as RFC 3339, e.g. 2026-12-24T18:00:00Z", deadline)}
				}
				p.Deadline = &t
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			m, err := a.eng.UpdateMission(cmd.Context(), args[0], p, a.actor())
			if err := a.printMission(m, err); err != nil {
				return err
			}
			if p.CostLimitUSD == nil && p.TokenLimit == nil {
				return nil
			}
			d, err := a.eng.GetMission(cmd.Context(), m.ID)
			if err != nil {
				return err
			}
			_, err = io.WriteString(a.err, missionSpentWarning(d))
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&title, "title", "", "new title")
	f.StringVar(&brief, "brief", "", "new brief")
	f.IntVar(&priority, "priority", 0, "1 (urgent) to 1000")
	f.IntVar(&retryBudget, "retry-budget", 0, "how many attempts may fail before it escalates")
	f.StringVar(&deadline, "deadline", "", "when it must be done, RFC 3339 (2026-12-24T18:00:00Z)")
	f.Float64Var(&costLimit, "cost-limit-usd", 0, "hard budget in US dollars (0: none); raising it above the spend resumes a mission held by it")
	f.Int64Var(&tokenLimit, "token-limit", 0, "hard budget in tokens, input (cached included) plus output (0: none)")
	return cmd
}

// newVoyagesUpdateCmd is update_voyage's budgets for a person: raising a spent voyage's limit
// above its spend lets its held missions start.
func newVoyagesUpdateCmd(a *app) *cobra.Command {
	var p engine.VoyagePatch
	var costLimit float64
	var tokenLimit int64
	cmd := &cobra.Command{
		Use:     "update VOYAGE_ID [--cost-limit-usd X] [--token-limit N]",
		Short:   "Change a voyage's budgets (only the flags given)",
		Example: "  mcp-scheduler voyages update " + domain.PrefixVoyage + "_01J… --cost-limit-usd 10",
		Args:    oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := firstError(domain.CheckID("voyage_id", domain.PrefixVoyage, args[0])); err != nil {
				return err
			}
			f := cmd.Flags()
			setIf(f, "cost-limit-usd", &p.CostLimitUSD, costLimit)
			setIf(f, "token-limit", &p.TokenLimit, tokenLimit)
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			v, err := a.eng.UpdateVoyage(cmd.Context(), args[0], p, a.actor())
			if err := a.printVoyageLine(v, err); err != nil {
				return err
			}
			_, err = io.WriteString(a.err, voyageSpentWarning(v))
			return err
		},
	}
	cmd.Flags().Float64Var(&costLimit, "cost-limit-usd", 0, "hard budget in US dollars (0: none); raising it above the spend resumes the voyage")
	cmd.Flags().Int64Var(&tokenLimit, "token-limit", 0, "hard budget in tokens, input (cached included) plus output (0: none)")
	return cmd
}

// setIf points *field at v when the flag name was given on the command line (a patch sets
// only what the person named).
func setIf[T any](f *pflag.FlagSet, name string, field **T, v T) {
	if f.Changed(name) {
		*field = &v
	}
}
