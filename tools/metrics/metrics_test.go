package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools/metrics"
)

// get scrapes srv's handler over a real loopback HTTP connection and parses the answer.
func get(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer func() { require.NoError(t, res.Body.Close()) }()
	require.Equal(t, http.StatusOK, res.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	require.NoError(t, err)
	return fams
}

// value is the value of the one series of name whose labels are exactly labels.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	f, ok := fams[name]
	require.True(t, ok, "%s is served", name)
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		if len(have) != len(labels) {
			continue
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	t.Fatalf("no series %s%v in %v", name, labels, f)
	return 0
}

func TestCollector_ObservedAsTheyHappen(t *testing.T) {
	c := metrics.New(metrics.Options{Version: "test"})
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	c.AttemptStarted("claude")
	c.AttemptStarted("claude")
	c.AttemptStarted("codex")
	c.AttemptEnded(domain.Attempt{Profile: "claude", Outcome: domain.OutcomeCompleted,
		Usage: domain.Usage{InputTokens: 1000, OutputTokens: 200, CostUSD: 0.75}})
	c.AttemptEnded(domain.Attempt{Profile: "claude", Outcome: domain.OutcomeFailed, Failure: &domain.Failure{Kind: "timeout"},
		Usage: domain.Usage{InputTokens: 10, CostUSD: 0.25}})
	c.AgentProcess("codex", true)
	c.AgentProcess("claude", true)
	c.AgentProcess("claude", false)
	c.TickObserved(3 * time.Millisecond)
	c.TickObserved(40 * time.Millisecond)
	c.LandingObserved("landed", 120*time.Millisecond)
	c.LandingObserved("conflicted", 80*time.Millisecond)
	fams := get(t, srv.URL)
	require.Equal(t, 2.0, value(t, fams, "mcp_scheduler_attempts_started_total", map[string]string{"profile": "claude"}))
	require.Equal(t, 1.0, value(t, fams, "mcp_scheduler_attempts_started_total", map[string]string{"profile": "codex"}))
	require.Equal(t, 1.0, value(t, fams, "mcp_scheduler_attempts_ended_total", map[string]string{"profile": "claude", "outcome": "completed"}))
	require.Equal(t, 1.0, value(t, fams, "mcp_scheduler_attempts_ended_total", map[string]string{"profile": "claude", "outcome": "failed"}))
	require.Equal(t, 1.0, value(t, fams, "mcp_scheduler_attempt_failures_total", map[string]string{"profile": "claude", "kind": "timeout"}))
	require.Equal(t, 1010.0, value(t, fams, "mcp_scheduler_agent_tokens_total", map[string]string{"profile": "claude", "kind": "input"}))
	require.Equal(t, 200.0, value(t, fams, "mcp_scheduler_agent_tokens_total", map[string]string{"profile": "claude", "kind": "output"}))
	require.InDelta(t, 1.0, value(t, fams, "mcp_scheduler_agent_cost_usd_total", map[string]string{"profile": "claude"}), 1e-9)
	require.Equal(t, 1.0, value(t, fams, "mcp_scheduler_agent_processes", map[string]string{"profile": "codex"}))
	require.Equal(t, 0.0, value(t, fams, "mcp_scheduler_agent_processes", map[string]string{"profile": "claude"}))
	require.Equal(t, 2.0, value(t, fams, "mcp_scheduler_tick_duration_seconds", nil))
	require.InDelta(t, 0.043, fams["mcp_scheduler_tick_duration_seconds"].GetMetric()[0].GetHistogram().GetSampleSum(), 1e-9)
	require.Equal(t, 1.0, value(t, fams, "mcp_scheduler_landings_total", map[string]string{"result": "landed"}))
	require.Equal(t, 1.0, value(t, fams, "mcp_scheduler_landings_total", map[string]string{"result": "conflicted"}))
	require.Equal(t, 0.0, value(t, fams, "mcp_scheduler_landings_total", map[string]string{"result": "checks_failed"}), "every result from the start")
	require.Equal(t, 2.0, value(t, fams, "mcp_scheduler_landing_duration_seconds", nil))
	require.Equal(t, 1.0, value(t, fams, "mcp_scheduler_build_info", map[string]string{"version": "test"}))
	require.NotContains(t, fams, "mcp_scheduler_missions", "no store: no stored-row gauges")
}

// TestCollector_ConcurrentObservers: the observers are called from many goroutines at once
// (the engine's committers, the supervisor's watchers); nothing is lost (and -race is quiet).
func TestCollector_ConcurrentObservers(t *testing.T) {
	c := metrics.New(metrics.Options{})
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				c.AttemptStarted("p")
				c.AttemptEnded(domain.Attempt{Profile: "p", Outcome: domain.OutcomeCompleted, Usage: domain.Usage{InputTokens: 2}})
				c.TickObserved(time.Millisecond)
			}
		})
	}
	wg.Wait()
	fams := get(t, srv.URL)
	require.Equal(t, 4000.0, value(t, fams, "mcp_scheduler_attempts_started_total", map[string]string{"profile": "p"}))
	require.Equal(t, 8000.0, value(t, fams, "mcp_scheduler_agent_tokens_total", map[string]string{"profile": "p", "kind": "input"}))
	require.Equal(t, 4000.0, value(t, fams, "mcp_scheduler_tick_duration_seconds", nil))
}

func TestCollector_StoreGauges(t *testing.T) {
	reads := 0
	counts := engine.MetricCounts{
		Missions: map[domain.MissionState]int{domain.StatePending: 4, domain.StateInterrupted: 1, domain.StateRunning: 2, domain.StateCompleted: 9},
		Voyages:  map[domain.VoyageState]int{domain.VoyageActive: 2},
		Holds:    map[string]int{engine.WhyConflict: 3, domain.LandWaitApproval: 1, "zero": 0},
		Landings: map[domain.LandingState]int{domain.LandingPending: 2, domain.LandingApproval: 1},
		Live:     map[string]int{"claude": 2}, OpenEscalations: 5}
	c := metrics.New(metrics.Options{Counts: func(context.Context) (engine.MetricCounts, error) {
		reads++
		return counts, nil
	}})
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	fams := get(t, srv.URL)
	require.Equal(t, 1, reads, "one store read per scrape")
	for _, s := range domain.AllStates() {
		require.Equal(t, float64(counts.Missions[s]), value(t, fams, "mcp_scheduler_missions", map[string]string{"state": string(s)}), s)
	}
	require.Equal(t, 2.0, value(t, fams, "mcp_scheduler_voyages", map[string]string{"state": "active"}))
	require.Equal(t, 0.0, value(t, fams, "mcp_scheduler_voyages", map[string]string{"state": "open"}), "every voyage state, zeros included")
	require.Equal(t, 5.0, value(t, fams, "mcp_scheduler_queue_depth", nil), "pending and interrupted")
	require.Equal(t, 3.0, value(t, fams, "mcp_scheduler_held_missions", map[string]string{"reason": engine.WhyConflict}))
	require.Equal(t, 1.0, value(t, fams, "mcp_scheduler_held_missions", map[string]string{"reason": domain.LandWaitApproval}))
	require.Equal(t, 0.0, value(t, fams, "mcp_scheduler_held_missions", map[string]string{"reason": engine.WhyBudget}), "every known hold code, zeros included")
	require.Len(t, fams["mcp_scheduler_held_missions"].GetMetric(), len(engine.HoldCodes()), "an unknown code with no mission is not written")
	require.Equal(t, 2.0, value(t, fams, "mcp_scheduler_landing_queue", map[string]string{"landing": "pending"}))
	require.Equal(t, 0.0, value(t, fams, "mcp_scheduler_landing_queue", map[string]string{"landing": "review"}))
	require.Equal(t, 2.0, value(t, fams, "mcp_scheduler_live_missions", map[string]string{"profile": "claude"}))
	require.Equal(t, 5.0, value(t, fams, "mcp_scheduler_open_escalations", nil))
	require.GreaterOrEqual(t, value(t, fams, "mcp_scheduler_store_read_seconds", nil), 0.0)
}

// TestCollector_StoreReadFails: a failed store read fails the scrape with 500 and says why,
// rather than serving counts that look current; the next scrape that can read serves again.
func TestCollector_StoreReadFails(t *testing.T) {
	fail := true
	var mu sync.Mutex
	c := metrics.New(metrics.Options{Counts: func(context.Context) (engine.MetricCounts, error) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return engine.MetricCounts{}, errors.New("database is locked")
		}
		return engine.MetricCounts{}, nil
	}})
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusInternalServerError, res.StatusCode)
	require.True(t, strings.Contains(string(body), "reading the store's counts") && strings.Contains(string(body), "database is locked"), "%s", body)
	mu.Lock()
	fail = false
	mu.Unlock()
	require.Equal(t, 0.0, value(t, get(t, srv.URL), "mcp_scheduler_queue_depth", nil))
}
