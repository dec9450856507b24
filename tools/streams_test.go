package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// sseEvent is one event (or keepalive comment) read from an SSE stream.
type sseEvent struct {
	id, data string
	comment  bool
}

// readSSE sends every event of body on the returned channel until the stream ends.
func readSSE(body io.Reader) <-chan sseEvent {
	out := make(chan sseEvent, 256)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.data != "" || ev.comment {
					out <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				ev.comment = true
			case strings.HasPrefix(line, "id:"):
				ev.id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
			case strings.HasPrefix(line, "data:"):
				ev.data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			}
		}
	}()
	return out
}

// rawSession initialises a Streamable HTTP session over raw HTTP and returns its headers.
func rawSession(t *testing.T, base string) map[string]string {
	t.Helper()
	res := post(t, base+PathMCP, initBody, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	sid := res.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	r := post(t, base+PathMCP, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	require.Equal(t, http.StatusAccepted, r.StatusCode)
	return h
}

// openGET opens the standalone GET stream of a session (with Last-Event-ID when given).
func openGET(t *testing.T, ctx context.Context, base string, h map[string]string, lastEventID string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+PathMCP, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

// postCtx POSTs body with the request context ctx (so that the test can drop the stream).
func postCtx(t *testing.T, ctx context.Context, url, body string, h map[string]string) *http.Response {
	t.Helper()
	return testenv.MCPRequest(t, ctx, http.MethodPost, url, body, h)
}

type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProgressToken any     `json:"progressToken"`
		Progress      float64 `json:"progress"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
}

func dispatchBody(id int, wait int, token string) string {
	meta := ""
	if token != "" {
		meta = fmt.Sprintf(`,"_meta":{"progressToken":%q}`, token)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"dispatch","arguments":{"title":"streams","wait_seconds":%d,"missions":[{"key":"a","title":"never runs here"}]}%s}}`, id, wait, meta)
}

// TestStreams_ProgressOnItsPOSTStream: with the standalone GET stream open (where mcp-go
// v1.2.1 used to send every other notification), every progress notification of a waiting
// dispatch arrives on the dispatch's own POST stream, with an event id, progress growing,
// all before the result; the GET stream gets none of them. The waiting call repeats its
// progress (the test uses WaitProgress 100 ms for the 15 s default).
func TestStreams_ProgressOnItsPOSTStream(t *testing.T) {
	b := setup(t, setupOpts{waitProgress: 100 * time.Millisecond})
	base, _ := httpServer(t, b, HTTPOptions{KeepAlive: time.Hour})
	h := rawSession(t, base)
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	get := openGET(t, ctx, base, h, "")
	require.Equal(t, http.StatusOK, get.StatusCode)
	var onGET []sseEvent
	var mu sync.Mutex
	getDone := make(chan struct{})
	go func() {
		defer close(getDone)
		for ev := range readSSE(get.Body) {
			mu.Lock()
			onGET = append(onGET, ev)
			mu.Unlock()
		}
	}()

	res := postCtx(t, ctx, base+PathMCP, dispatchBody(7, 2, "tok-1"), h)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	var progress []float64
	ids := map[string]bool{}
	var order []string
	gotResult := false
	for ev := range readSSE(res.Body) {
		if ev.comment {
			continue
		}
		order = append(order, ev.id)
		require.False(t, gotResult, "nothing follows the result: %s", ev.data)
		require.NotEmpty(t, ev.id, "every event carries an id: %s", ev.data)
		require.False(t, ids[ev.id], "ids are unique")
		ids[ev.id] = true
		var m rpcMessage
		require.NoError(t, json.Unmarshal([]byte(ev.data), &m), ev.data)
		switch {
		case m.Method == "notifications/progress":
			require.Equal(t, "tok-1", m.Params.ProgressToken)
			if n := len(progress); n > 0 {
				require.Greater(t, m.Params.Progress, progress[n-1], "progress grows")
			}
			progress = append(progress, m.Params.Progress)
		case m.Result != nil:
			require.JSONEq(t, "7", string(m.ID))
			gotResult = true
		default:
			t.Fatalf("unexpected event on the POST stream: %s", ev.data)
		}
	}
	require.True(t, gotResult, "the result came on the POST stream")
	require.GreaterOrEqual(t, len(progress), 2, "the first state and at least one repeat during a 2 s wait")

	// The POST stream is resumable: a GET with the id of its first event replays the rest
	// of it, the result last, and ends.
	rest := openGET(t, ctx, base, h, order[0])
	require.Equal(t, http.StatusOK, rest.StatusCode)
	var replayed []string
	for ev := range readSSE(rest.Body) {
		replayed = append(replayed, ev.id)
	}
	require.Equal(t, order[1:], replayed)

	cancel()
	<-getDone
	mu.Lock()
	defer mu.Unlock()
	for _, ev := range onGET {
		require.NotContains(t, ev.data, "tok-1", "no progress of the POST on the GET stream")
	}
}

// TestStreams_POSTKeepalive: a long call without a progress token still hears from its
// stream: the POST response turns into an SSE stream with keepalive comments, and the
// result is its last event (with an id). A short call keeps its plain JSON answer.
func TestStreams_POSTKeepalive(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{KeepAlive: 100 * time.Millisecond})
	h := rawSession(t, base)

	quick := post(t, base+PathMCP, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, h)
	require.Equal(t, "application/json", quick.Header.Get("Content-Type"))

	res := post(t, base+PathMCP, dispatchBody(8, 2, ""), h)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	comments := 0
	var last sseEvent
	for ev := range readSSE(res.Body) {
		if ev.comment {
			require.Empty(t, last.data, "no keepalive after the result")
			comments++
			continue
		}
		last = ev
	}
	require.GreaterOrEqual(t, comments, 1)
	require.NotEmpty(t, last.id)
	var m rpcMessage
	require.NoError(t, json.Unmarshal([]byte(last.data), &m), last.data)
	require.JSONEq(t, "8", string(m.ID))
	require.Contains(t, string(m.Result), `"structuredContent"`)
}

// TestStreams_GETResumesFromLastEventID: events on the standalone GET stream carry ids; a
// client that lost the stream gets, with Last-Event-ID, what was sent while it was away
// and nothing before; another session's id is refused with 400, and so is one never issued.
func TestStreams_GETResumesFromLastEventID(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{KeepAlive: time.Hour})
	h := rawSession(t, base)
	sid := h["Mcp-Session-Id"]
	send := func(n int) {
		require.NoError(t, b.srv.MCP().SendNotificationToSpecificClient(sid, "notifications/message",
			map[string]any{"level": "info", "data": fmt.Sprintf("note %d", n)}))
	}
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	first, cancelFirst := context.WithCancel(ctx)
	get := openGET(t, first, base, h, "")
	require.Equal(t, http.StatusOK, get.StatusCode)
	events := readSSE(get.Body)
	send(1)
	ev := <-events
	require.Contains(t, ev.data, "note 1")
	require.NotEmpty(t, ev.id)
	cancelFirst() // the stream drops
	for range events {
	}
	send(2) // while the client is away: kept in the buffer
	send(3)

	res := openGET(t, ctx, base, h, ev.id)
	require.Equal(t, http.StatusOK, res.StatusCode)
	replay := readSSE(res.Body)
	for _, want := range []string{"note 2", "note 3"} {
		got := <-replay
		require.Contains(t, got.data, want)
		require.NotEmpty(t, got.id)
	}
	send(4) // the resumed stream goes on live
	require.Contains(t, (<-replay).data, "note 4")

	other := rawSession(t, base)
	for _, id := range []string{ev.id, "999999", "not-an-id"} {
		r := openGET(t, ctx, base, other, id)
		require.Equal(t, http.StatusBadRequest, r.StatusCode, "Last-Event-ID %s on another session", id)
	}
}

// TestStreams_DisconnectFreesGoroutines: a client that drops a waiting dispatch's stream
// frees the goroutines serving it (the count settles back), and the voyage it created
// stays: the durable work goes on.
func TestStreams_DisconnectFreesGoroutines(t *testing.T) {
	b := setup(t, setupOpts{waitProgress: 50 * time.Millisecond})
	base, _ := httpServer(t, b, HTTPOptions{KeepAlive: 50 * time.Millisecond})
	h := rawSession(t, base)
	http.DefaultClient.CloseIdleConnections()
	settled := func() int {
		var n int
		testenv.WaitFor(t, "the goroutine count to settle", func() bool {
			a := runtime.NumGoroutine()
			time.Sleep(20 * time.Millisecond) // not a wait: settled means unchanged across 20 ms

			n = runtime.NumGoroutine()
			return a == n
		})
		return n
	}
	before := settled()
	for i := range 3 {
		ctx, cancel := context.WithCancel(b.ctx)
		res := postCtx(t, ctx, base+PathMCP, dispatchBody(10+i, 600, fmt.Sprintf("drop-%d", i)), h)
		events := readSSE(res.Body)
		ev := <-events
		for ev.comment {
			ev = <-events
		}
		require.Contains(t, ev.data, "notifications/progress")
		cancel()
	}
	http.DefaultClient.CloseIdleConnections()
	testenv.WaitFor(t, "the dropped streams' goroutines to end", func() bool {
		return runtime.NumGoroutine() <= before
	})
	vs, err := b.eng.Voyages(b.ctx, nil, 10)
	require.NoError(t, err)
	require.Len(t, vs, 3, "the voyages outlive the dropped calls")
}

// openSSE opens a legacy /sse stream and returns its events and the /message URL.
func openSSE(t *testing.T, ctx context.Context, base, lastEventID string) (<-chan sseEvent, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+PathSSE, nil)
	require.NoError(t, err)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = res.Body.Close() })
	if res.StatusCode != http.StatusOK {
		return nil, "", res
	}
	events := readSSE(res.Body)
	ep := <-events
	require.Contains(t, ep.data, "/message?sessionId=")
	return events, base + ep.data, res
}

// TestStreams_LegacySSE: on /sse a waiting dispatch's progress comes before its result,
// every event (but pings) has an id, a reconnect with Last-Event-ID first replays what the
// old stream sent after that id (an unknown id gets 400), and closing the stream ends the
// waiting call (the goroutine count settles) while its voyage stays.
func TestStreams_LegacySSE(t *testing.T) {
	b := setup(t, setupOpts{waitProgress: 100 * time.Millisecond})
	base, _ := httpServer(t, b, HTTPOptions{KeepAlive: time.Hour})
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	events, msgURL, _ := openSSE(t, ctx, base, "")
	for i, body := range []string{initBody, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
		require.Equal(t, http.StatusAccepted, post(t, msgURL, body, nil).StatusCode, i)
	}
	require.Contains(t, (<-events).data, `"protocolVersion"`)
	require.Equal(t, http.StatusAccepted, post(t, msgURL, dispatchBody(5, 1, "sse-tok"), nil).StatusCode)
	var seen []sseEvent
	for ev := range events {
		require.NotEmpty(t, ev.id, ev.data)
		seen = append(seen, ev)
		if strings.Contains(ev.data, `"id":5`) {
			break
		}
		require.Contains(t, ev.data, `"sse-tok"`, "only the call's progress before its result")
	}
	require.GreaterOrEqual(t, len(seen), 3, "progress, at least one repeat, the result")

	r := post(t, msgURL, `{"jsonrpc":"2.0","id":6,"method":"ping"}`, nil) // one more after the result
	require.Equal(t, http.StatusAccepted, r.StatusCode)
	require.Contains(t, (<-events).data, `"id":6`)

	_, _, refused := openSSE(t, ctx, base, "no-such-session-1")
	require.Equal(t, http.StatusBadRequest, refused.StatusCode)
	again, _, _ := openSSE(t, ctx, base, seen[len(seen)-2].id)
	require.Contains(t, (<-again).data, `"id":5`, "the replay starts after the given id")
	require.Contains(t, (<-again).data, `"id":6`)

	// A waiting call ends with its stream.
	http.DefaultClient.CloseIdleConnections()
	before := runtime.NumGoroutine()
	sctx, drop := context.WithCancel(ctx)
	events, msgURL, _ = openSSE(t, sctx, base, "")
	require.Equal(t, http.StatusAccepted, post(t, msgURL, initBody, nil).StatusCode)
	<-events
	require.Equal(t, http.StatusAccepted, post(t, msgURL, dispatchBody(9, 600, "gone"), nil).StatusCode)
	require.Contains(t, (<-events).data, `"gone"`)
	drop()
	http.DefaultClient.CloseIdleConnections()
	testenv.WaitFor(t, "the dropped SSE call's goroutines to end", func() bool {
		return runtime.NumGoroutine() <= before
	})
	vs, err := b.eng.Voyages(b.ctx, nil, 10)
	require.NoError(t, err)
	require.Len(t, vs, 2, "the voyages stay")
}

// TestStreams_GETKeepalive: an idle standalone GET stream hears a ping at each keepalive
// interval; pings are not history (no event id, so Last-Event-ID does not move).
func TestStreams_GETKeepalive(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{KeepAlive: 50 * time.Millisecond})
	h := rawSession(t, base)
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	get := openGET(t, ctx, base, h, "")
	require.Equal(t, http.StatusOK, get.StatusCode)
	events := readSSE(get.Body)
	for range 2 {
		ev := <-events
		require.Contains(t, ev.data, `"method":"ping"`)
		require.Empty(t, ev.id)
	}
}
