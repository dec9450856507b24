package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// TestVoyageGraph: the voyage endpoint gives every mission with its state and landing and
// every edge with its kind, the scheduler's write-area conflict marked by its source.
func TestVoyageGraph(t *testing.T) {
	f := start(t, "tok")
	d := f.voyage()
	var g engine.VoyageGraph
	f.getJSON("/api/voyages/"+d.Voyage.ID, &g)
	require.Len(t, g.Missions, 4)
	for _, m := range g.Missions {
		require.Equal(t, domain.StatePending, m.State, m.Key)
	}
	type edge struct{ from, to, kind string }
	var got []edge
	for _, e := range g.Edges {
		kind := string(e.Type)
		if e.Type == domain.EdgeConflict && e.Source == domain.SourceScheduler {
			kind = "inferred_conflict"
		}
		got = append(got, edge{e.DependsOn, e.MissionID, kind})
	}
	require.ElementsMatch(t, []edge{
		{d.IDs["a"], d.IDs["b"], "hard"},
		{d.IDs["a"], d.IDs["c"], "soft"},
		{d.IDs["b"], d.IDs["d"], "serialization"},
		{d.IDs["c"], d.IDs["d"], "inferred_conflict"},
	}, got)

	code, body, _ := f.do(http.MethodGet, "/api/voyages/voy_nope", "", map[string]string{"Authorization": "Bearer tok"})
	require.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, code, body)
	require.Contains(t, body, "voyage")
}

// TestMissionPageAndResolve: a blocked mission's page shows its attempt, why it waits and
// its escalation; resolving the escalation through the API (the engine's own operation)
// moves the mission on, and bad requests are refused with the field and what to send.
func TestMissionPageAndResolve(t *testing.T) {
	f := start(t, "")
	d := f.voyage()
	a := d.IDs["a"]
	esc := f.block(f.run(a))

	var p dashboard.MissionPage
	f.getJSON("/api/missions/"+a, &p)
	require.Equal(t, domain.StateBlocked, p.Mission.State)
	require.Len(t, p.Attempts, 1)
	require.Len(t, p.Escalations, 1)
	require.Equal(t, esc.ID, p.Escalations[0].ID)
	require.Equal(t, []string{"retry", "skip"}, p.Actions, "a blocked mission can be retried or skipped")
	var b dashboard.MissionPage
	f.getJSON("/api/missions/"+d.IDs["b"], &b)
	require.Equal(t, []string{"skip"}, b.Actions, "a pending one only skipped: retry is for failed, blocked or cancelled")
	require.NotEmpty(t, b.WhyNotRunning, "a waiting mission says why")
	require.Equal(t, a, b.WhyNotRunning[0].MissionID)
	var l dashboard.MissionLog
	f.getJSON("/api/missions/"+a+"/log", &l)
	require.Equal(t, 1, l.Attempt)
	require.Contains(t, l.Unavailable, "left no output files")
	var df dashboard.MissionDiff
	f.getJSON("/api/missions/"+a+"/diff", &df)
	require.Contains(t, df.Unavailable, "no workspaces")
	var escs []domain.Escalation
	f.getJSON("/api/escalations", &escs)
	require.Len(t, escs, 1)

	post := func(path, body string) (int, string) {
		code, b, _ := f.do(http.MethodPost, path, body, map[string]string{"Origin": f.base, "Content-Type": "application/json"})
		return code, b
	}
	resolve := "/api/escalations/" + esc.ID + "/resolve"
	code, body := post(resolve, `{"action":"explode"}`)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "action")
	code, body = post(resolve, `{"action":"retry","colour":"red"}`)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, `unknown field \"colour\"`)
	code, body, _ = f.do(http.MethodPost, resolve, `action=retry`, map[string]string{"Origin": f.base, "Content-Type": "application/x-www-form-urlencoded"})
	require.Equal(t, http.StatusUnsupportedMediaType, code, body)
	code, body = post("/api/escalations/esc_0000000000000000/resolve", `{"action":"retry"}`)
	require.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, code, body)

	code, body = post(resolve, `{"action":"retry","note":"outline kept"}`)
	require.Equal(t, http.StatusOK, code, body)
	f.getJSON("/api/missions/"+a, &p)
	require.Equal(t, domain.StatePending, p.Mission.State)
	require.Equal(t, dashboard.Actor, p.Escalations[0].ResolvedBy)
	code, body = post(resolve, `{"action":"retry"}`)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "already resolved", "the engine's own text")
}

// TestAgentsPage: a running mission shows with its agent; the landing queue is empty.
func TestAgentsPage(t *testing.T) {
	f := start(t, "")
	d := f.voyage()
	f.run(d.IDs["a"])
	var p dashboard.AgentsPage
	f.getJSON("/api/agents", &p)
	require.Len(t, p.Running, 1)
	require.Equal(t, d.IDs["a"], p.Running[0].ID)
	require.Equal(t, "tester", p.Running[0].Lease.Owner)
	require.Empty(t, p.Landing)
}

// TestEvents: the event stream opens with "ready", then carries a "change" event naming the
// mission a committed change touched.
func TestEvents(t *testing.T) {
	f := start(t, "")
	d := f.voyage()
	ev := openEvents(t, f)
	require.Equal(t, "ready", ev.next(t).name)
	f.run(d.IDs["a"])
	for { // until a change event names the mission that started
		e := ev.next(t)
		require.Equal(t, "change", e.name)
		var ce dashboard.ChangeEvent
		require.NoError(t, json.Unmarshal([]byte(e.data), &ce))
		for _, c := range ce.Changes {
			if c.MissionID == d.IDs["a"] {
				return
			}
		}
	}
}

type sseEvent struct{ name, data string }

type eventStream struct {
	events chan sseEvent
	errc   chan error
}

// openEvents reads /api/events in the background; next returns the following event.
func openEvents(t testing.TB, f *fixture) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(f.ctx)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.base+"/api/events", nil)
	require.NoError(t, err)
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &eventStream{events: make(chan sseEvent, 1024), errc: make(chan error, 1)}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var cur sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur.name != "" {
					s.events <- cur
				}
				cur = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				cur.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				cur.data = strings.TrimPrefix(line, "data: ")
			}
		}
		s.errc <- sc.Err()
		close(s.events)
	}()
	return s
}

func (s *eventStream) next(t testing.TB) sseEvent {
	t.Helper()
	e, ok := testenv.Receive(t, "an event on /api/events", s.events)
	if !ok {
		t.Fatalf("event stream ended: %v", <-s.errc)
	}
	return e
}

// TestMissionLogTail: the mission page's output is the tail of the attempt's files as the
// runner writes them (the same reader as get_mission_log), cut at a line start, with the full
// sizes; an attempt number the mission never had is refused naming the field.
func TestMissionLogTail(t *testing.T) {
	f := start(t, "")
	d := f.voyage()
	m := f.run(d.IDs["a"])
	dir := filepath.Join(f.dir, "attempts", m.ID, "a1")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var out strings.Builder
	for i := range 400 {
		fmt.Fprintf(&out, `{"type":"task.progress","message":"step %03d of the outline"}`+"\n", i)
		out.WriteString(`{"type":"agent.heartbeat"}` + "\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, tools.LogStdout), []byte(out.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, tools.LogStderr), []byte("warming up\n"), 0o644))

	var l dashboard.MissionLog
	f.getJSON("/api/missions/"+m.ID+"/log", &l)
	require.NotNil(t, l.Log, l.Unavailable)
	require.True(t, l.Log.Truncated)
	require.Equal(t, int64(out.Len()), l.Log.StdoutBytes)
	require.LessOrEqual(t, len(l.Log.Stdout), 16<<10)
	require.True(t, strings.HasPrefix(l.Log.Stdout, `{"type"`), "cut at a line start")
	require.True(t, strings.HasSuffix(l.Log.Stdout, `{"type":"agent.heartbeat"}`+"\n"))
	require.NotEmpty(t, l.Readable)
	require.Equal(t, "progress: step 399 of the outline", l.Readable[len(l.Readable)-1], "read as text, heartbeats left out")
	for _, r := range l.Readable {
		require.NotContains(t, r, "heartbeat")
	}
	require.Equal(t, "warming up\n", l.Log.Stderr)

	code, body, _ := f.do(http.MethodGet, "/api/missions/"+m.ID+"/log?attempt=2", "", nil)
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body, "attempt: give a number from 1 to 1")
}

// A finished mission offers no button the engine would refuse (the page showed Retry and Skip
// on a landed mission; a click answered "retry is not allowed in that state").
func TestMissionPage_FinishedOffersNoActions(t *testing.T) {
	f := start(t, "")
	d := f.voyage()
	m := f.run(d.IDs["a"])
	_, err := f.eng.Complete(f.ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)
	var p dashboard.MissionPage
	f.getJSON("/api/missions/"+m.ID, &p)
	require.Equal(t, domain.StateCompleted, p.Mission.State)
	require.Empty(t, p.Actions)
}
