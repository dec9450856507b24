package main

import (
	"context"
	"errors"
	"sync"

	"github.com/spf13/cobra"
)

func newDaemonCmd(a *app) *cobra.Command {
	var metricsAddr string
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Run the scheduler loop without serving MCP (voyages go on with no client connected)",
		Long: "Run the scheduler loop in the foreground until SIGINT or SIGTERM, for people who want voyages to\n" +
			"go on while no MCP client is connected. Several processes may share a data dir (MCP servers, the\n" +
			"CLI, daemons): exactly one leads the loop at a time and the others take over when it stops.\n" +
			"Run it under your service manager (systemd, launchd) to keep it up.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			addr, err := a.metricsAddr(metricsAddr)
			if err != nil {
				return err
			}
			return a.daemon(cmd.Context(), addr)
		},
	}
	metricsFlag(cmd, &metricsAddr)
	return cmd
}

// daemon runs the loop until ctx ends, serving metrics on the loopback metricsAddr when set.
func (a *app) daemon(ctx context.Context, metricsAddr string) error {
	if err := a.open(ctx); err != nil {
		return err
	}
	l, err := a.openLoop(ctx)
	if err != nil {
		return err
	}
	a.recordProfiles(ctx)
	a.log.Info("mcp-scheduler daemon running", "data_dir", a.cfg.DataDir, "profiles", len(a.cfg.Profiles))
	go func() {
		if err := a.eng.WatchExternal(ctx, externalPoll); err != nil {
			a.log.Error("watching other processes' changes stopped", "err", err)
		}
	}()
	var wg sync.WaitGroup
	defer wg.Wait() // the metrics listener ends with ctx
	if err := l.s.Start(ctx); err != nil {
		return errors.Join(err, l.s.Stop(context.WithoutCancel(ctx)))
	}
	a.serveMetrics(ctx, &wg, metricsAddr)
	<-ctx.Done()
	a.log.Info("mcp-scheduler daemon stopping")
	return l.s.Stop(context.WithoutCancel(ctx))
}
