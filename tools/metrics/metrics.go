// Package metrics is the scheduler's Prometheus endpoint: a registry of its own (not the
// global default one) holding the counters and histograms the engine and the loop report as
// things happen (Collector implements engine.Observer and scheduler.Metrics) and the gauges
// read from the store at each scrape (one Engine.MetricCounts per scrape). docs/metrics.md
// lists every metric with a sample query.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Namespace prefixes every metric of the scheduler's own.
const Namespace = "mcp_scheduler"

// CountsFunc reads the store's counts for one scrape (Engine.MetricCounts).
type CountsFunc func(ctx context.Context) (engine.MetricCounts, error)

// Options configure New.
type Options struct {
	// Counts reads the gauges of stored rows at each scrape; nil serves no such gauges.
	Counts CountsFunc
	// Version is reported by mcp_scheduler_build_info.
	Version string
	// ScrapeTimeout bounds the store read of one scrape (default 10s).
	ScrapeTimeout time.Duration
	// Logger gets the errors of scrapes (default: discarded).
	Logger *slog.Logger
}

// Collector holds the registry and the metrics observed as things happen. It is safe for
// concurrent use; its methods are cheap (atomic adds), as engine.Observer and
// scheduler.Metrics ask.
type Collector struct {
	reg *prometheus.Registry
	log *slog.Logger

	attemptsStarted *prometheus.CounterVec
	attemptsEnded   *prometheus.CounterVec
	failures        *prometheus.CounterVec
	tokens          *prometheus.CounterVec
	cost            *prometheus.CounterVec
	landings        *prometheus.CounterVec
	tick            prometheus.Histogram
	landing         prometheus.Histogram
	agents          *prometheus.GaugeVec
}

// New builds a Collector with its registry: the scheduler's metrics, the store's gauges
// (when o.Counts is set), the Go runtime's and this process's (go_*, process_*).
func New(o Options) *Collector {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ScrapeTimeout <= 0 {
		o.ScrapeTimeout = 10 * time.Second
	}
	c := &Collector{reg: prometheus.NewRegistry(), log: o.Logger}
	c.define()
	c.reg.MustRegister(c.attemptsStarted, c.attemptsEnded, c.failures, c.tokens, c.cost, c.landings,
		c.tick, c.landing, c.agents,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "build_info",
			Help: "Always 1; the version label names the running build.", ConstLabels: prometheus.Labels{"version": o.Version}},
			func() float64 { return 1 }))
	if o.Counts != nil {
		c.reg.MustRegister(&storeGauges{counts: o.Counts, timeout: o.ScrapeTimeout})
	}
	return c
}

// Registry is the Collector's registry (for tests and for adding collectors).
func (c *Collector) Registry() *prometheus.Registry { return c.reg }

// Handler serves the registry in the Prometheus text format (OpenMetrics when the scraper
// asks for it). A store read that fails makes the scrape fail with 500 and the error (so
// that the scraper's up goes to 0 rather than showing stale counts), and is logged.
func (c *Collector) Handler() http.Handler {
	return promhttp.HandlerFor(c.reg, promhttp.HandlerOpts{
		ErrorLog:          slogPrinter{c.log},
		ErrorHandling:     promhttp.HTTPErrorOnError,
		Registry:          c.reg, // promhttp_metric_handler_errors_total
		EnableOpenMetrics: true,
	})
}

// slogPrinter is promhttp's error log on slog.
type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) {
	p.log.Error("metrics scrape failed", "err", v)
}
