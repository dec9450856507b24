package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newPauseCmd(a *app) *cobra.Command { return pauseCmd(a, true) }

func newResumeCmd(a *app) *cobra.Command { return pauseCmd(a, false) }

func pauseCmd(a *app, pause bool) *cobra.Command {
	var reason string
	cmd := &cobra.Command{Use: "resume", Short: "Let the scheduler start new missions again", Args: cobra.NoArgs}
	if pause {
		cmd.Use, cmd.Short = "pause", "Stop starting new missions (running ones go on)"
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := a.open(cmd.Context()); err != nil {
			return err
		}
		if err := a.eng.SetPaused(cmd.Context(), pause, reason, a.actor()); err != nil {
			return err
		}
		p, err := a.eng.Paused(cmd.Context())
		if err != nil {
			return err
		}
		if a.jsonOut {
			return writeJSON(a.out, map[string]bool{"paused": p})
		}
		state := "running: new missions start"
		if p {
			state = "paused: nothing new starts until mcp-scheduler resume"
		}
		_, err = fmt.Fprintln(a.out, "scheduler", state)
		return err
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the event log")
	return cmd
}
