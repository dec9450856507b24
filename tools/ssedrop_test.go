package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// sseCall posts one tools/call on a legacy SSE session and returns its structured result,
// skipping any other event (replayed or progress) that comes first. It fails the test on
// a JSON-RPC error or a tool error.
func sseCall(t *testing.T, events <-chan sseEvent, msgURL string, id int, tool string, args map[string]any) map[string]any {
	t.Helper()
	a, err := json.Marshal(args)
	require.NoError(t, err)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, a)
	require.Equal(t, http.StatusAccepted, post(t, msgURL, body, nil).StatusCode, tool)
	for ev := range events {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result *struct {
				IsError    bool           `json:"isError"`
				Structured map[string]any `json:"structuredContent"`
			} `json:"result"`
		}
		if ev.comment || json.Unmarshal([]byte(ev.data), &m) != nil || string(m.ID) != fmt.Sprint(id) {
			continue
		}
		require.NotNil(t, m.Result, "%s: %s", tool, ev.data)
		require.False(t, m.Result.IsError, "%s: %s", tool, ev.data)
		return m.Result.Structured
	}
	t.Fatalf("the SSE stream ended before the answer to %s", tool)
	return nil
}

// TestStreams_LegacySSEDropMidCall: when a legacy /sse stream drops while a call runs, the
// call's response is lost (mcp-go has no stream left to put it on; a replay from
// Last-Event-ID on a new stream does not have it either) and the old session's /message
// endpoint refuses further posts, but the durable work goes on: the client opens a new
// stream, repeats the dispatch with its idempotency key to learn the voyage and mission ids
// (created=false: nothing made twice), and the mission is claimed and completed as usual;
// get_mission shows it. docs/mcp.md, "Streams".
func TestStreams_LegacySSEDropMidCall(t *testing.T) {
	b := setup(t, setupOpts{waitProgress: 100 * time.Millisecond})
	base, _ := httpServer(t, b, HTTPOptions{KeepAlive: time.Hour})
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()

	// Session A: a waiting dispatch, dropped once its voyage exists (first progress).
	actx, drop := context.WithCancel(ctx)
	events, msgA, _ := openSSE(t, actx, base, "")
	for _, body := range []string{initBody, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
		require.Equal(t, http.StatusAccepted, post(t, msgA, body, nil).StatusCode)
	}
	require.Contains(t, (<-events).data, `"protocolVersion"`)
	const key = "sse-drop-1"
	dispatch := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"dispatch","arguments":{"title":"dropped","idempotency_key":"` + key +
		`","wait_seconds":600,"missions":[{"key":"a","title":"goes on"}]},"_meta":{"progressToken":"drop-tok"}}}`
	require.Equal(t, http.StatusAccepted, post(t, msgA, dispatch, nil).StatusCode)
	first := <-events
	require.Contains(t, first.data, `"drop-tok"`, "the dispatch's first progress")
	require.NotEmpty(t, first.id)
	for range 2 { // two repeats after the first, for the replay below
		require.Contains(t, (<-events).data, `"drop-tok"`)
	}
	drop()
	http.DefaultClient.CloseIdleConnections()

	// What the client sees of the old session: its /message endpoint refuses posts.
	var code int
	testenv.WaitFor(t, "the dropped session's /message endpoint to refuse posts", func() bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, msgA, strings.NewReader(`{"jsonrpc":"2.0","id":6,"method":"ping"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		code = res.StatusCode
		return code != http.StatusAccepted
	})
	require.Equal(t, http.StatusBadRequest, code, "a post to the dropped session is refused")

	// Session B, resumed from A's first event: the replay carries what A's stream sent, never
	// the lost response. The dispatch repeated with its key answers with the same voyage.
	events, msgB, _ := openSSE(t, ctx, base, first.id)
	require.Equal(t, http.StatusAccepted, post(t, msgB, initBody, nil).StatusCode)
	var replayed []string
	for ev := range events {
		if strings.Contains(ev.data, `"protocolVersion"`) {
			break
		}
		replayed = append(replayed, ev.data)
	}
	progress := 0
	for _, d := range replayed {
		if strings.HasPrefix(d, `{"jsonrpc":"2.0","id":6,"result"`) {
			continue // a probe's ping above reached A before its session ended: A's stream carried the answer
		}
		require.Contains(t, d, `"drop-tok"`, "only A's progress is replayed, not its lost result: %s", d)
		progress++
	}
	require.GreaterOrEqual(t, progress, 2, "the two repeats A's stream sent after its first event")
	require.Equal(t, http.StatusAccepted, post(t, msgB, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil).StatusCode)
	again := sseCall(t, events, msgB, 21, "dispatch", map[string]any{"title": "dropped", "idempotency_key": key,
		"missions": []map[string]any{{"key": "a", "title": "goes on"}}})
	require.Equal(t, false, again["created"], "the repeated dispatch made nothing new")
	ids, ok := again["ids"].(map[string]any)
	require.True(t, ok, "ids: %v", again)
	mission, _ := ids["a"].(string)
	require.NotEmpty(t, mission)
	vs, err := b.eng.Voyages(b.ctx, nil, 10)
	require.NoError(t, err)
	require.Len(t, vs, 1, "one voyage: the dropped call's")

	// The work goes on: the mission is claimed, completed, and get_mission shows it.
	claim := sseCall(t, events, msgB, 22, "claim_mission", map[string]any{"agent_id": "w"})
	require.Equal(t, true, claim["claimed"], "claim: %v", claim)
	m, _ := claim["mission"].(map[string]any)
	require.Equal(t, mission, m["id"])
	epoch := claim["epoch"]
	sseCall(t, events, msgB, 23, "complete_mission", map[string]any{"mission_id": mission, "epoch": epoch, "summary": "done after the drop"})
	det := sseCall(t, events, msgB, 24, "get_mission", map[string]any{"mission_id": mission})
	dm, _ := det["mission"].(map[string]any)
	require.Equal(t, string(domain.StateCompleted), dm["state"], "get_mission: %v", det)
}
