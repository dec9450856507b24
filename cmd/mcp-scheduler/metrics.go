package main

import (
	"context"
	"sync"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
	"github.com/mcp-scheduler/mcp-scheduler/tools/metrics"
)

// The Collector is what the engine and the loop report to.
var (
	_ engine.Observer   = (*metrics.Collector)(nil)
	_ scheduler.Metrics = (*metrics.Collector)(nil)
)

// collector returns the process's metrics (made once): told by the engine of attempts and
// by the loop of ticks, landings and agents, and reading the store's counts at each scrape.
func (a *app) collector() *metrics.Collector {
	if a.metrics == nil {
		a.metrics = metrics.New(metrics.Options{Version: buildVersion(), Logger: a.log.With("component", "metrics"),
			Counts: func(ctx context.Context) (engine.MetricCounts, error) { return a.eng.MetricCounts(ctx) }})
	}
	return a.metrics
}

// metricsFlag adds --metrics to a command that runs the loop (serve, daemon).
func metricsFlag(cmd *cobra.Command, addr *string) {
	cmd.Flags().StringVar(addr, "metrics", "", "also serve Prometheus metrics at http://ADDR"+tools.PathMetrics+
		" without a token (loopback only, e.g. 127.0.0.1:9464; default [http] metrics_addr; --http serves them behind its token)")
}

// metricsAddr is the stand-alone metrics address: the flag, else [http] metrics_addr ("" for
// none), checked to be loopback (a usage error otherwise).
func (a *app) metricsAddr(flag string) (string, error) {
	if flag == "" {
		flag = a.cfg.HTTP.MetricsAddr
	}
	if flag == "" {
		return "", nil
	}
	if err := tools.CheckMetricsAddr(flag); err != nil {
		return "", usageError{err}
	}
	return flag, nil
}

// serveMetrics runs the stand-alone loopback metrics listener on addr until ctx ends (none
// when addr is empty); a listener that cannot start or stops is logged as an error.
func (a *app) serveMetrics(ctx context.Context, wg *sync.WaitGroup, addr string) {
	if addr == "" {
		return
	}
	h := a.collector().Handler()
	wg.Go(func() {
		if err := tools.ServeMetrics(ctx, addr, h, a.log.With("component", "metrics"), nil); err != nil {
			a.log.Error("metrics listener stopped", "addr", addr, "err", err)
		}
	})
}
