package metrics

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// storeGauges is the prometheus.Collector of the gauges that count stored rows: one
// Engine.MetricCounts per scrape (a read whose cost follows the live work, not the history),
// turned into constant metrics. Every value of a known set (mission and voyage states,
// unsettled landings, hold codes: engine.HoldCodes) is written, zeros included, so that a
// query sees a count go to 0 and a fresh store shows 0 rather than no data; open-ended labels
// (profiles, a hold code this build does not know) are written when their count is not 0.
type storeGauges struct {
	counts  CountsFunc
	timeout time.Duration
}

func gaugeDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
}

var (
	descMissions = gaugeDesc("missions", "Missions stored, by state (all processes sharing the data dir).", "state")
	descVoyages  = gaugeDesc("voyages", "Voyages stored, by state.", "state")
	descQueue    = gaugeDesc("queue_depth", "Missions waiting to run (pending or interrupted), runnable or held.")
	descLandings = gaugeDesc("landing_queue", "Completed missions whose landing is not settled, by landing state (pending, review, approved, waiting: the landing queue; approval, repair: waiting for a person or a repair).", "landing")
	descHeld     = gaugeDesc("held_missions", "Missions still waiting with a recorded hold, by hold reason code (why_not_running's code).", "reason")
	descLive     = gaugeDesc("live_missions", "Missions leased or running, by profile (managed and pull-mode agents of every process).", "profile")
	descEsc      = gaugeDesc("open_escalations", "Escalations open (waiting for a decision).")
	descRead     = gaugeDesc("store_read_seconds", "How long this scrape's read of the stored counts took.")
)

// unsettledLandings are the landing states counted by descLandings.
var unsettledLandings = []domain.LandingState{domain.LandingPending, domain.LandingReview, domain.LandingApproved,
	domain.LandingWaiting, domain.LandingApproval, domain.LandingRepair}

// Describe sends the descriptions of every gauge.
func (g *storeGauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMissions, descVoyages, descQueue, descLandings, descHeld, descLive, descEsc, descRead} {
		ch <- d
	}
}

// Collect reads the store once and sends the gauges; a failed read sends an invalid metric,
// which fails the scrape with the error.
func (g *storeGauges) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	began := time.Now()
	c, err := g.counts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descMissions, fmt.Errorf("reading the store's counts: %w", err))
		return
	}
	gauge := func(d *prometheus.Desc, n int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(n), labels...)
	}
	for _, s := range domain.AllStates() {
		gauge(descMissions, c.Missions[s], string(s))
	}
	for _, s := range domain.AllVoyageStates() {
		gauge(descVoyages, c.Voyages[s], string(s))
	}
	gauge(descQueue, c.Missions[domain.StatePending]+c.Missions[domain.StateInterrupted])
	for _, l := range unsettledLandings {
		gauge(descLandings, c.Landings[l], string(l))
	}
	for _, code := range engine.HoldCodes() {
		gauge(descHeld, c.Holds[code], code)
	}
	for code, n := range c.Holds { // a code no list names yet (a newer process's) still shows
		if n != 0 && !slices.Contains(engine.HoldCodes(), code) {
			gauge(descHeld, n, code)
		}
	}
	for profile, n := range c.Live {
		if n != 0 {
			gauge(descLive, n, profile)
		}
	}
	gauge(descEsc, c.OpenEscalations)
	ch <- prometheus.MustNewConstMetric(descRead, prometheus.GaugeValue, time.Since(began).Seconds())
}
