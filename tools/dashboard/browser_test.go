package dashboard_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// TestBrowser drives the dashboard in a real headless Chromium (testdata/browser.mjs, through
// playwright-core) against a real server with a voyage in flight: requests without the token,
// with the raw token as cookie or from a foreign Origin are refused; the login page sets the
// session; the graph shows every mission with its state and every edge kind; a mission that
// starts turns running on the page without a reload; resolving its escalation from the page
// sends it back to pending; the header counts as the voyage's badges; a review edge and a
// conflict that ended are drawn; a screenshot of each page is kept (their paths are logged).
func TestBrowser(t *testing.T) {
	const token = "browser-test-token"
	f := start(t, token)
	d := f.voyage()
	states := map[string]domain.MissionState{}
	for k := range d.IDs {
		states[k] = domain.StatePending
	}
	ids, _ := json.Marshal(d.IDs)
	st, _ := json.Marshal(states)
	b := startBrowser(t, f, "browser.mjs", "VOYAGE="+d.Voyage.ID, "IDS="+string(ids), "STATES="+string(st))
	var changed time.Time // when mission a started (the state change the page must show)
	for s := b.step(); s != ""; s = b.step() {
		switch s {
		case "graph": // the page shows the graph: start mission a
			changed = time.Now()
			f.run(d.IDs["a"])
			b.next()
		case "live": // measured, never asserted (docs/benchmarks.md)
			t.Logf("state change to the page in the browser: %s (includes playwright's wait and the stdout pipe)", time.Since(changed))
		case "mission": // the mission page shows it running: it blocks with an escalation
			m, err := f.eng.Mission(f.ctx, d.IDs["a"])
			require.NoError(t, err)
			f.block(m)
			b.next()
		case "resolved": // the page resolved the escalation with retry
			m, err := f.eng.Mission(f.ctx, d.IDs["a"])
			require.NoError(t, err)
			require.Equal(t, domain.StatePending, m.State)
			// Its next attempt fails: the mission page must say how (kind and summary).
			ran := f.run(d.IDs["a"])
			_, err = f.eng.Fail(f.ctx, ran.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureTest,
				Summary: "3 tests failed in outline_test.go"}})
			require.NoError(t, err)
			f.run(d.IDs["c"]) // something running for the agents page
			b.next()
		case "edges": // c completes (its conflict with d is dropped) and b gets a reviewer
			m, err := f.eng.Mission(f.ctx, d.IDs["c"])
			require.NoError(t, err)
			_, err = f.eng.Complete(f.ctx, m.Fence(), domain.WorkerResult{Status: domain.ResultCompleted, Summary: "written"})
			require.NoError(t, err)
			f.review(d.Voyage.ID, d.IDs["b"])
			b.next()
		}
	}
	b.finish(7)
	for _, want := range []string{"refused", "live"} {
		require.True(t, b.seen[want], "step %s", want)
	}
}
