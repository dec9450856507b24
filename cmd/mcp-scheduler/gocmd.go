package main

import (
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

func newGoCmd(a *app) *cobra.Command {
	var brief, voyage, repo string
	var priority int
	var costLimit float64
	var tokenLimit int64
	var dependsOn, writeArea []string
	cmd := &cobra.Command{
		Use:   "go TITLE",
		Short: "Create a mission",
		Long: "Create a mission with the title TITLE (quote it). It runs in the repository of the current directory\n" +
			"unless --repo names another configured one.",
		Example: `  mcp-scheduler go "Fix the flaky login test" --brief "TestLogin fails one run in ten" --priority 20`,
		Args:    oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if repo != "" && !a.cfg.isRemoteRepository(repo) {
				abs, err := filepath.Abs(repo)
				if err != nil {
					return err
				}
				repo = abs
			}
			if cmd.Flags().Changed("priority") && priority == 0 {
				// 0 is the spec's "unset" (default 100); typed on the command line it is out of
				// range like any other value outside 1..1000, and refused in the same words.
				return firstError(engine.CheckPriority("priority", 0))
			}
			spec := engine.MissionSpec{Title: args[0], Brief: brief, Priority: priority, VoyageID: voyage,
				DependsOn: dependsOn, Repository: repo, WriteArea: writeArea, RetryBudget: a.cfg.Scheduler.RetryBudget,
				CostLimitUSD: costLimit, TokenLimit: tokenLimit}
			if err := firstError(engine.CheckMissionSpec(spec, time.Now())); err != nil {
				return err
			}
			if err := a.open(cmd.Context()); err != nil {
				return err
			}
			c, err := a.eng.CreateMission(cmd.Context(), spec, a.actor())
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.out, c.Mission)
			}
			err = printShown(a.out, "%s  %s  priority %d  %s\n", c.Mission.ID, c.Mission.State, c.Mission.Priority, c.Mission.Title)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&brief, "brief", "", "what the agent should do (default: the title)")
	f.IntVar(&priority, "priority", 0, "1 (urgent) to 1000; left out: 100")
	f.StringVar(&voyage, "voyage", "", "add the mission to this voyage (vyg_…)")
	f.StringArrayVar(&dependsOn, "depends-on", nil, "a mission that must complete and land first (repeatable)")
	f.StringVar(&repo, "repo", "", "repository to work in (default: the one of the current directory)")
	f.StringArrayVar(&writeArea, "write-area", nil, "glob of files the mission may change, e.g. 'internal/auth/**' (repeatable)")
	f.Float64Var(&costLimit, "cost-limit-usd", 0, "hard budget in US dollars: an attempt that crosses it is stopped and the mission escalated (0: none)")
	f.Int64Var(&tokenLimit, "token-limit", 0, "hard budget in tokens, input (cached included) plus output, like --cost-limit-usd (0: none)")
	return cmd
}
