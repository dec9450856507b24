package metrics

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Histogram buckets, in seconds: a tick takes milliseconds on an idle store and seconds on
// a loaded one; a landing (merge, checks) from tens of milliseconds to minutes.
var (
	tickBuckets    = prometheus.ExponentialBuckets(0.001, 2, 15) // 1 ms … 16 s
	landingBuckets = prometheus.ExponentialBuckets(0.01, 2, 16)  // 10 ms … 5.5 min
)

// define makes the metrics observed as things happen (docs/metrics.md has each).
func (c *Collector) define() {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	c.attemptsStarted = counter("attempts_started_total", "Attempts started (leases acquired, managed and pull mode) by this process, by profile.", "profile")
	c.attemptsEnded = counter("attempts_ended_total", "Attempts ended (attempt records written) by this process, by profile and outcome.", "profile", "outcome")
	c.failures = counter("attempt_failures_total", "Failed attempts ended by this process, by profile and failure kind.", "profile", "kind")
	c.tokens = counter("agent_tokens_total", "Tokens the agents reported in the usage of the attempts this process ended, by profile and kind (input, output, and any other *_tokens field of the stored usage).", "profile", "kind")
	c.cost = counter("agent_cost_usd_total", "Cost in US dollars of the attempts this process ended, as stored in their usage, by profile.", "profile")
	c.landings = counter("landings_total", "Landings run on git by this process, by result.", "result")
	for _, r := range engine.LandingResults() { // every result from the start, at 0
		c.landings.WithLabelValues(r)
	}
	c.tick = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "tick_duration_seconds",
		Help: "Duration of the scheduler ticks this process ran as the leader (recovery, supervision, planning, dispatch, settlement).", Buckets: tickBuckets})
	c.landing = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "landing_duration_seconds",
		Help: "Duration of the landings this process ran (merge and checks; a batch's duration shared among its missions).", Buckets: landingBuckets})
	c.agents = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "agent_processes",
		Help: "Managed agent processes this process supervises now, by profile."}, []string{"profile"})
}

// AttemptStarted counts an attempt started (engine.Observer).
func (c *Collector) AttemptStarted(profile string) {
	c.attemptsStarted.WithLabelValues(profile).Inc()
}

// AttemptEnded counts an attempt ended with its outcome, its failure kind and the tokens
// and cost of its stored usage (engine.Observer).
func (c *Collector) AttemptEnded(a domain.Attempt) {
	c.attemptsEnded.WithLabelValues(a.Profile, string(a.Outcome)).Inc()
	if a.Failure != nil {
		c.failures.WithLabelValues(a.Profile, string(a.Failure.Kind)).Inc()
	}
	tokens, cost := usageFigures(a.Usage)
	for kind, n := range tokens {
		c.tokens.WithLabelValues(a.Profile, kind).Add(n)
	}
	if cost > 0 {
		c.cost.WithLabelValues(a.Profile).Add(cost)
	}
}

// usageFigures reads the stored usage by its JSON fields, so that a field added to
// domain.Usage later (cache_read_tokens, cache_write_tokens) is counted without a change
// here: every "<kind>_tokens" number is a token kind, "cost_usd" the cost.
func usageFigures(u domain.Usage) (map[string]float64, float64) {
	b, err := json.Marshal(u)
	if err != nil {
		return nil, 0 // a struct of numbers always marshals
	}
	var fields map[string]any
	if json.Unmarshal(b, &fields) != nil {
		return nil, 0
	}
	tokens := map[string]float64{}
	var cost float64
	for k, v := range fields {
		n, ok := v.(float64)
		if !ok || n <= 0 {
			continue
		}
		if kind, ok := strings.CutSuffix(k, "_tokens"); ok {
			tokens[kind] = n
		} else if k == "cost_usd" {
			cost = n
		}
	}
	return tokens, cost
}

// TickObserved records a tick's duration (scheduler.Metrics).
func (c *Collector) TickObserved(d time.Duration) { c.tick.Observe(d.Seconds()) }

// LandingObserved counts a landing by result and records its duration (scheduler.Metrics).
func (c *Collector) LandingObserved(result string, d time.Duration) {
	c.landings.WithLabelValues(result).Inc()
	c.landing.Observe(d.Seconds())
}

// AgentProcess moves the gauge of supervised agent processes (scheduler.Metrics).
func (c *Collector) AgentProcess(profile string, running bool) {
	if running {
		c.agents.WithLabelValues(profile).Inc()
	} else {
		c.agents.WithLabelValues(profile).Dec()
	}
}
