package main

import (
	"context"
	"errors"
	"sync"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

func newDaemonCmd(a *app) *cobra.Command {
	var httpAddr, token, metricsAddr string
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Run the scheduler loop without serving MCP (voyages go on with no client connected)",
		Long: "Run the scheduler loop in the foreground until SIGINT or SIGTERM, for people who want voyages to\n" +
			"go on while no MCP client is connected. Several processes may share a data dir (MCP servers, the\n" +
			"CLI, daemons): exactly one leads the loop at a time and the others take over when it stops.\n" +
			"Run it under your service manager (systemd, launchd) to keep it up.\n" +
			"With --http it also serves the web dashboard and MCP over HTTP on that address, as serve --http does.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			addr, err := a.metricsAddr(metricsAddr)
			if err != nil {
				return err
			}
			return a.daemon(cmd.Context(), httpAddr, token, addr)
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "also serve the web dashboard and MCP over HTTP on this host:port (port 0: any free port)")
	cmd.Flags().StringVar(&token, "token", "", "with --http: the bearer token (prefer $"+EnvToken+" or [http] token_file: flags show in ps)")
	metricsFlag(cmd, &metricsAddr)
	return cmd
}

// daemon runs the loop until ctx ends; with httpAddr it also serves the dashboard and MCP
// over HTTP, and metrics on the loopback metricsAddr when set.
func (a *app) daemon(ctx context.Context, httpAddr, tokenFlag, metricsAddr string) error {
	var tokens *tools.Tokens
	if httpAddr != "" {
		var err error
		if tokens, err = a.tokens(tokenFlag); err != nil {
			return err
		}
		if err := tools.CheckBind(httpAddr, tokens != nil); err != nil {
			return usageError{err} // exit 2, as --metrics and --pprof refuse a non-loopback address
		}
	}
	// With --http a PostgreSQL server not up yet does not keep clients waiting in silence: MCP
	// and the dashboard answer meanwhile that the database is not reachable (storewait.go).
	a.connectLater = httpAddr != ""
	if err := a.open(ctx); err != nil {
		return err
	}
	l, err := a.openLoop(ctx)
	if err != nil {
		return err
	}
	if httpAddr != "" {
		_, stop, err := a.sideHTTP(ctx, httpAddr, tokens) // it logs the dashboard's URL
		if err != nil {
			return err
		}
		defer stop()
	}
	if a.storeConnecting() {
		if stopped, err := a.awaitStore(ctx, nil); stopped || err != nil {
			return err
		}
	}
	a.recordProfiles(ctx)
	a.log.Info("mcp-scheduler daemon running", "data_dir", a.cfg.DataDir, "profiles", len(a.cfg.Profiles))
	a.sayWhoLeads(ctx, "daemon")
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
	defer a.startNotifier(ctx, l)()
	a.reloadOnHangup(ctx, l.s)
	a.serveMetrics(ctx, &wg, metricsAddr)
	<-ctx.Done()
	a.log.Info("mcp-scheduler daemon stopping")
	return l.s.Stop(context.WithoutCancel(ctx))
}
