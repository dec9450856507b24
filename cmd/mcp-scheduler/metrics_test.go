package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage"
)

var metricsServing = regexp.MustCompile(`serving metrics .*?addr=(\S+)`)

// metricsConfig is a sandbox configuration with the bundled reference agent as the only
// profile, a fast tick and short retry backoffs.
func (s *sandbox) metricsConfig(extra string) {
	s.t.Helper()
	dir := filepath.Join(s.home, "config", "mcp-scheduler")
	require.NoError(s.t, os.MkdirAll(dir, 0o700))
	require.NoError(s.t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte(`
[scheduler]
tick = "100ms"
backoff_initial = "100ms"
backoff_max = "200ms"
[[profiles]]
name = "ref"
runtime = "ndjson"
command = ["{mcp_scheduler}", "reference-agent"]
env = ["PATH"]
`+extra), 0o600))
}

// scrape GETs url with header and parses the answer with the Prometheus text parser.
func scrape(t *testing.T, url string, header map[string]string) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { require.NoError(t, res.Body.Close()) }()
	if res.StatusCode != http.StatusOK {
		return res.StatusCode, nil
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	require.NoError(t, err, "the answer parses as the Prometheus text format")
	return res.StatusCode, fams
}

// sample is the value of the series of family name whose labels include want (0 and false
// when there is none).
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

func requireSample(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string, want float64) {
	t.Helper()
	got, ok := sample(fams, name, labels)
	require.True(t, ok, "%s%v is in the scrape", name, labels)
	require.InDelta(t, want, got, 1e-9, "%s%v", name, labels)
}

// storeTruth is what the test reads from the database itself, through the store seam's other
// methods (not MetricCounts), to check the scrape against.
type storeTruth struct {
	missions map[domain.MissionState]int
	holds    map[string]int
	voyages  map[domain.VoyageState]int
	open     int
	started  int
	outcomes map[domain.AttemptOutcome]int
	failures map[string]int
	input    int64
	output   int64
	cost     float64
	landings map[string]int
}

func readStoreTruth(t *testing.T, dataDir string) storeTruth {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, filepath.Join(dataDir, "mcp-scheduler.db"), storage.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	tr := storeTruth{outcomes: map[domain.AttemptOutcome]int{}, failures: map[string]int{}, landings: map[string]int{}}
	require.NoError(t, st.View(ctx, func(r engine.Reader) error {
		var err error
		if tr.missions, err = r.MissionCounts(ctx); err != nil {
			return err
		}
		if tr.holds, err = r.HoldCounts(ctx); err != nil {
			return err
		}
		if tr.voyages, err = r.VoyageCounts(ctx); err != nil {
			return err
		}
		if tr.open, err = r.EscalationCount(ctx, domain.EscalationOpen); err != nil {
			return err
		}
		ms, err := r.MissionList(ctx, engine.MissionFilter{Limit: 1000})
		if err != nil {
			return err
		}
		for _, m := range ms {
			tr.started += m.Attempt
			as, err := r.AttemptList(ctx, m.ID)
			if err != nil {
				return err
			}
			for _, a := range as {
				tr.outcomes[a.Outcome]++
				if a.Failure != nil {
					tr.failures[a.Failure.Kind]++
				}
				tr.input, tr.output, tr.cost = tr.input+a.Usage.InputTokens, tr.output+a.Usage.OutputTokens, tr.cost+a.Usage.CostUSD
			}
			ls, err := r.LandingList(ctx, m.ID)
			if err != nil {
				return err
			}
			for _, l := range ls {
				tr.landings[l.Status]++
			}
		}
		return nil
	}))
	return tr
}

// dispatchMetricsVoyage dispatches, over a real MCP client on Streamable HTTP (the dispatch tool), a voyage of
// three missions for the reference agent: a, then b after a (both report usage), and c,
// which fails its first attempt and succeeds on its second. It waits for the voyage to settle.
func dispatchMetricsVoyage(t *testing.T, base, token string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	require.NoError(t, err)
	require.NoError(t, c.Start(ctx))
	defer func() { require.NoError(t, c.Close()) }()
	var ir mcp.InitializeRequest
	ir.Params.ClientInfo = mcp.Implementation{Name: "metrics-test", Version: "0"}
	_, err = c.Initialize(ctx, ir)
	require.NoError(t, err)
	usage := func(file string, in, out int, cost float64) string {
		u, _ := json.Marshal(map[string]any{"status": "completed", "summary": "done " + file,
			"usage": map[string]any{"input_tokens": in, "output_tokens": out, "cost_usd": cost}})
		return "@write " + file + " " + file + "\n@commit " + file + "\n@result " + string(u)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "dispatch"
	req.Params.Arguments = map[string]any{"title": "metrics voyage", "wait_seconds": 300,
		"missions": []map[string]any{
			{"key": "a", "title": "a", "write_area": []string{"a.txt"}, "brief": usage("a.txt", 1000, 100, 1.5)},
			{"key": "b", "title": "b", "write_area": []string{"b.txt"}, "brief": usage("b.txt", 500, 50, 0.25)},
			{"key": "c", "title": "c", "write_area": []string{"c.txt"}, "brief": "@flaky 1 error first attempt breaks\n@write c.txt c\n@commit c\n@done"},
		},
		"edges": []map[string]any{{"mission": "b", "depends_on": "a"}}}
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var d struct {
		Settled bool                        `json:"settled"`
		Counts  map[domain.MissionState]int `json:"counts"`
		Voyage  domain.Voyage               `json:"voyage"`
	}
	require.NoError(t, json.Unmarshal(raw, &d))
	require.True(t, d.Settled, "the voyage settled: %s", raw)
	require.Equal(t, domain.VoyageCompleted, d.Voyage.State, "%s", raw)
}

// TestMetrics_ScrapedAfterARealVoyage: serve --http with a token runs a real voyage with the
// reference agent; /metrics then answers 401 without the token and 403 to a foreign Origin,
// and with the token parses as the Prometheus text format with figures equal to the
// store's own counts (missions, voyages, holds, escalations, attempts by outcome, failures,
// tokens, cost, landings).
func TestMetrics_ScrapedAfterARealVoyage(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.metricsConfig("")
	const token = "metrics-token-0123456789"
	p, base := s.startHTTP([]string{EnvToken + "=" + token})
	dispatchMetricsVoyage(t, base, token)

	code, _ := scrape(t, base+"/metrics", nil)
	require.Equal(t, http.StatusUnauthorized, code, "no token")
	code, _ = scrape(t, base+"/metrics", map[string]string{"Authorization": "Bearer wrong"})
	require.Equal(t, http.StatusUnauthorized, code, "a wrong token")
	code, _ = scrape(t, base+"/metrics", map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example"})
	require.Equal(t, http.StatusForbidden, code, "a foreign Origin")

	auth := map[string]string{"Authorization": "Bearer " + token}
	var fams map[string]*dto.MetricFamily
	var tr storeTruth
	// The voyage settled when its last landing was recorded; the landing's counter and the
	// agent's exit are observed around the same commits, so wait until scrape and store agree
	// on the figures that close the run (a generous bound, no speed asserted).
	testenv.WaitFor(t, "the scrape to agree with the store", func() bool {
		code, fams = scrape(t, base+"/metrics", auth)
		require.Equal(t, http.StatusOK, code)
		tr = readStoreTruth(t, s.dataDir)
		got, _ := sample(fams, "mcp_scheduler_landings_total", map[string]string{"result": "landed"})
		procs, _ := sample(fams, "mcp_scheduler_agent_processes", map[string]string{"profile": "ref"})
		ended := 0.0
		for o := range tr.outcomes {
			n, _ := sample(fams, "mcp_scheduler_attempts_ended_total", map[string]string{"outcome": string(o)})
			ended += n
		}
		return got == float64(tr.landings["landed"]) && procs == 0 && ended == float64(tr.started)
	})

	for _, st := range domain.AllStates() {
		requireSample(t, fams, "mcp_scheduler_missions", map[string]string{"state": string(st)}, float64(tr.missions[st]))
	}
	require.Equal(t, 3, tr.missions[domain.StateCompleted], "the three missions completed")
	for _, st := range domain.AllVoyageStates() {
		requireSample(t, fams, "mcp_scheduler_voyages", map[string]string{"state": string(st)}, float64(tr.voyages[st]))
	}
	requireSample(t, fams, "mcp_scheduler_queue_depth", nil, float64(tr.missions[domain.StatePending]+tr.missions[domain.StateInterrupted]))
	for code, n := range tr.holds {
		requireSample(t, fams, "mcp_scheduler_held_missions", map[string]string{"reason": code}, float64(n))
	}
	requireSample(t, fams, "mcp_scheduler_open_escalations", nil, float64(tr.open))
	requireSample(t, fams, "mcp_scheduler_landing_queue", map[string]string{"landing": "pending"}, 0)

	require.Equal(t, 4, tr.started, "a, b, and c twice")
	requireSample(t, fams, "mcp_scheduler_attempts_started_total", map[string]string{"profile": "ref"}, float64(tr.started))
	for o, n := range tr.outcomes {
		requireSample(t, fams, "mcp_scheduler_attempts_ended_total", map[string]string{"profile": "ref", "outcome": string(o)}, float64(n))
	}
	require.Equal(t, 1, tr.outcomes[domain.OutcomeFailed], "c's first attempt failed")
	for kind, n := range tr.failures {
		requireSample(t, fams, "mcp_scheduler_attempt_failures_total", map[string]string{"profile": "ref", "kind": kind}, float64(n))
	}
	require.EqualValues(t, 1500, tr.input)
	requireSample(t, fams, "mcp_scheduler_agent_tokens_total", map[string]string{"profile": "ref", "kind": "input"}, float64(tr.input))
	requireSample(t, fams, "mcp_scheduler_agent_tokens_total", map[string]string{"profile": "ref", "kind": "output"}, float64(tr.output))
	requireSample(t, fams, "mcp_scheduler_agent_cost_usd_total", map[string]string{"profile": "ref"}, tr.cost)

	require.Equal(t, 3, tr.landings["landed"])
	requireSample(t, fams, "mcp_scheduler_landings_total", map[string]string{"result": "landed"}, float64(tr.landings["landed"]))
	landed := 0
	for _, n := range tr.landings {
		landed += n
	}
	requireSample(t, fams, "mcp_scheduler_landing_duration_seconds", nil, float64(landed))
	ticks, ok := sample(fams, "mcp_scheduler_tick_duration_seconds", nil)
	require.True(t, ok)
	require.Positive(t, ticks, "the leader's ticks are timed")
	requireSample(t, fams, "mcp_scheduler_agent_processes", map[string]string{"profile": "ref"}, 0)
	requireSample(t, fams, "mcp_scheduler_build_info", nil, 1)
	_, ok = sample(fams, "go_goroutines", nil)
	require.True(t, ok, "the Go runtime's metrics are served too")

	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, p.wait())
}

// requireZeros checks a fresh store's scrape: every known label value of the gauges and of
// landings_total is present with 0 (a panel shows 0, not no data).
func requireZeros(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	for _, s := range domain.AllStates() {
		requireSample(t, fams, "mcp_scheduler_missions", map[string]string{"state": string(s)}, 0)
	}
	for _, s := range domain.AllVoyageStates() {
		requireSample(t, fams, "mcp_scheduler_voyages", map[string]string{"state": string(s)}, 0)
	}
	for _, c := range engine.HoldCodes() {
		requireSample(t, fams, "mcp_scheduler_held_missions", map[string]string{"reason": c}, 0)
	}
	for _, r := range engine.LandingResults() {
		requireSample(t, fams, "mcp_scheduler_landings_total", map[string]string{"result": r}, 0)
	}
	requireSample(t, fams, "mcp_scheduler_landing_queue", map[string]string{"landing": string(domain.LandingPending)}, 0)
}

// TestMetrics_LoopbackListener: `serve --metrics 127.0.0.1:0` (stdio) and `daemon --metrics`
// serve /metrics without a token on loopback, on a fresh store every known label with 0, refuse a foreign Host or Origin, and a
// non-loopback --metrics or [http] metrics_addr is refused before anything starts, naming it.
func TestMetrics_LoopbackListener(t *testing.T) {
	s := newSandbox(t)
	for _, args := range [][]string{{"serve", "--metrics", "0.0.0.0:0"}, {"serve", "--metrics", ":9464"},
		{"daemon", "--metrics", "192.0.2.1:9464"}, {"serve", "--metrics", "no-port"}} {
		p := s.start(nil, args...)
		require.NotEqual(t, 0, p.wait(), args)
		require.Contains(t, p.stderrText(), "--metrics", args)
		require.NotContains(t, p.stderrText(), "serving metrics", args)
		require.NotContains(t, p.stderrText(), "mcp-scheduler serving", args)
	}
	s.metricsConfig("[http]\nmetrics_addr = \"0.0.0.0:9464\"\n")
	_, errs, code := s.cli("status")
	require.NotEqual(t, 0, code)
	require.Contains(t, errs, "http.metrics_addr")
	require.Contains(t, errs, "not loopback")

	s.metricsConfig("")
	for _, args := range [][]string{{"serve", "--metrics", "127.0.0.1:0"}, {"daemon", "--metrics", "127.0.0.1:0"}} {
		p := s.start(nil, args...)
		var addr string
		testenv.WaitFor(t, "the metrics listener", func() bool {
			if m := metricsServing.FindStringSubmatch(p.stderrText()); m != nil {
				addr = m[1]
				return true
			}
			return p.cmd.ProcessState != nil
		})
		require.NotEmpty(t, addr, "%v exited: %s", args, p.stderrText())
		code, fams := scrape(t, "http://"+addr+"/metrics", nil)
		require.Equal(t, http.StatusOK, code, args)
		requireZeros(t, fams)
		code, _ = scrape(t, "http://"+addr+"/metrics", map[string]string{"Origin": "http://evil.example"})
		require.Equal(t, http.StatusForbidden, code, args)
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
		require.NoError(t, err)
		req.Host = "evil.example" // DNS rebinding
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		require.Equal(t, http.StatusForbidden, res.StatusCode, args)
		require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
		require.Equal(t, 0, p.wait(), args)
	}
}
