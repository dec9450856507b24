package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// TestBrowser_RaiseBudget: a real scheduler runs the reference agent, whose usage report
// ($0.50) crosses its mission's cost limit ($0.25): the mission blocks on its budget. In a
// real Chromium, another site's page cannot raise it (form and script posts are refused, the
// limit stays); the mission page shows the spend, the limit and the form; a negative limit
// is refused with the engine's sentence; a new limit resumes the mission, which completes,
// recorded with the dashboard's actor; the agents page counts both attempts' spend today.
func TestBrowser_RaiseBudget(t *testing.T) {
	f := startScheduled(t, "budget-browser-token")
	usage := `{"type":"task.usage","usage":{"input_tokens":1000,"output_tokens":100,"cost_usd":0.5}}` + "\n"
	d, err := f.eng.Dispatch(f.ctx, engine.VoyageSpec{Title: "budgeted", Missions: []engine.MissionSpec{
		{Key: "a", Title: "spends", CostLimitUSD: 0.25, WriteArea: []string{"a.txt"},
			Brief: "@raw " + strconv.Quote(usage) + "\n@write a.txt a\n@commit a\n@done spent"},
	}}, "test")
	require.NoError(t, err)
	a := d.IDs["a"]
	limit := func() domain.Mission {
		m, err := f.eng.Mission(f.ctx, a)
		require.NoError(t, err)
		return m
	}
	testenv.WaitFor(t, "the mission to block on its cost budget", func() bool {
		m := limit()
		return m.State == domain.StateBlocked && m.LastFailure != nil && m.LastFailure.Kind == domain.FailureBudget
	})

	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/api/missions/%s/budget">`+
			`<input name="cost_limit_usd" value="100"><button id="raise">raise</button></form>`, f.base, a)
	}))
	t.Cleanup(evil.Close)
	// localhost is another site than 127.0.0.1 (SameSite compares hosts, not ports).
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)

	b := startBrowser(t, f, "budget.mjs", "MISSION="+a, "EVIL="+evilURL)
	for s := b.step(); s != ""; s = b.step() {
		switch s {
		case "crosssite", "refused":
			m := limit()
			require.Equal(t, 0.25, m.CostLimitUSD, "after %s", s)
			require.Equal(t, domain.StateBlocked, m.State, "after %s", s)
			b.next()
		}
	}
	b.finish(3)
	m := limit()
	require.Equal(t, domain.StateCompleted, m.State)
	require.Equal(t, 5.0, m.CostLimitUSD)
	evs, err := f.eng.Events(f.ctx, engine.EventFilter{MissionID: a, Types: []string{"mission.updated"}})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, dashboard.Actor, evs[0].Actor)
}
