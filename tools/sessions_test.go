package tools

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// wireError is a JSON-RPC error response as read from an HTTP body.
type wireError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpcError requires res to be an HTTP error with status and a JSON-RPC error body of code.
func rpcError(t *testing.T, res *http.Response, status, code int) wireError {
	t.Helper()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, status, res.StatusCode, string(body))
	require.Equal(t, "application/json", res.Header.Get("Content-Type"), string(body))
	var e wireError
	require.NoError(t, json.Unmarshal(body, &e), string(body))
	require.Equal(t, "2.0", e.JSONRPC)
	require.Equal(t, code, e.Error.Code, e.Error.Message)
	return e
}

// send makes a request with a body (nil for GET and DELETE) and the MCP headers.
func send(t *testing.T, method, url, body string, header map[string]string) *http.Response {
	t.Helper()
	return testenv.MCPRequest(t, context.Background(), method, url, body, header)
}

// initSession initializes a legacy session over raw HTTP and returns its headers.
func initSession(t *testing.T, base string) map[string]string {
	t.Helper()
	res := post(t, base+PathMCP, initBody, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	sid := res.Header.Get("Mcp-Session-Id")
	require.True(t, strings.HasPrefix(sid, sessionIDPrefix), sid)
	h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	require.Equal(t, http.StatusAccepted, post(t, base+PathMCP, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h).StatusCode)
	return h
}

const listBody = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

// TestHTTPSessions_UnknownForgedTerminated404: a session id this process did not issue (well
// formed or not) or one that was DELETEd gets 404 with a JSON-RPC error saying to initialize
// again, on POST, GET and DELETE; a live one is served.
func TestHTTPSessions_UnknownForgedTerminated404(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{})
	h := initSession(t, base)
	require.Equal(t, http.StatusOK, post(t, base+PathMCP, listBody, h).StatusCode)
	for _, forged := range []string{sessionIDPrefix + rand.Text(), "mcp-session-8f14e45f-ceea-467f-a0e6-6d6d1b7c3a8e", "anything"} {
		fh := map[string]string{"Mcp-Session-Id": forged, "Mcp-Protocol-Version": "2025-06-18"}
		e := rpcError(t, post(t, base+PathMCP, listBody, fh), http.StatusNotFound, codeSessionNotFound)
		require.Equal(t, "2", string(e.ID), "the request's id")
		require.Contains(t, e.Error.Message, "send initialize")
		rpcError(t, send(t, http.MethodGet, base+PathMCP, "", fh), http.StatusNotFound, codeSessionNotFound)
		rpcError(t, send(t, http.MethodDelete, base+PathMCP, "", fh), http.StatusNotFound, codeSessionNotFound)
	}
	require.Equal(t, http.StatusOK, send(t, http.MethodDelete, base+PathMCP, "", h).StatusCode)
	e := rpcError(t, post(t, base+PathMCP, listBody, h), http.StatusNotFound, codeSessionNotFound)
	require.Contains(t, e.Error.Message, "DELETE", "the 404 says why the session is gone")
	rpcError(t, send(t, http.MethodGet, base+PathMCP, "", h), http.StatusNotFound, codeSessionNotFound)
	rpcError(t, send(t, http.MethodDelete, base+PathMCP, "", h), http.StatusNotFound, codeSessionNotFound)
	rpcError(t, post(t, base+PathMCP, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h), http.StatusNotFound, codeSessionNotFound)
	live, pending := b.srv.sessions.counts()
	require.Equal(t, [2]int{0, 0}, [2]int{live, pending})
}

// TestHTTPSessions_StaleAfterRestart: after the HTTP server restarts, the old session id
// gets 404; the client initializes again and sees the mission it created before.
func TestHTTPSessions_StaleAfterRestart(t *testing.T) {
	b := setup(t, setupOpts{})
	base, stop := httpServer(t, b, HTTPOptions{})
	h := initSession(t, base)
	res := post(t, base+PathMCP, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"kept over a restart"}}}`, h)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, stop())
	base, _ = httpServer(t, b, HTTPOptions{})
	rpcError(t, post(t, base+PathMCP, listBody, h), http.StatusNotFound, codeSessionNotFound)
	h = initSession(t, base)
	res = post(t, base+PathMCP, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_missions","arguments":{}}}`, h)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, string(body), "kept over a restart")
}

// TestHTTPSessions_MissingHeader400: a request of a session-based revision other than
// initialize without Mcp-Session-Id gets 400 with a JSON-RPC error naming the header.
func TestHTTPSessions_MissingHeader400(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{})
	initSession(t, base)
	for _, body := range []string{listBody, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":"p","method":"ping"}`} {
		e := rpcError(t, post(t, base+PathMCP, body, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}), http.StatusBadRequest, mcp.INVALID_REQUEST)
		require.Contains(t, e.Error.Message, "Mcp-Session-Id", body)
		require.Contains(t, e.Error.Message, "initialize", body)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		e := rpcError(t, send(t, m, base+PathMCP, "", nil), http.StatusBadRequest, mcp.INVALID_REQUEST)
		require.Contains(t, e.Error.Message, "Mcp-Session-Id", m)
	}
	live, _ := b.srv.sessions.counts()
	require.Equal(t, 1, live, "a GET without a session minted none")
}

// TestHTTPSessions_RefusedInitializeCreatesNothing: an initialize answered with an error
// returns no Mcp-Session-Id and leaves no session behind.
func TestHTTPSessions_RefusedInitializeCreatesNothing(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{})
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"\xff\",\"version\":\"0\"}}}",
	} {
		res := post(t, base+PathMCP, body, nil)
		raw, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Contains(t, string(raw), `"error"`, body)
		require.Empty(t, res.Header.Get("Mcp-Session-Id"), body)
		live, pending := b.srv.sessions.counts()
		require.Equal(t, [2]int{0, 0}, [2]int{live, pending}, body)
	}
}

// TestHTTPSessions_BoundEvictsLongestIdle: past max_sessions the longest-idle session is
// evicted and gets 404 saying so; the others go on.
func TestHTTPSessions_BoundEvictsLongestIdle(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{MaxSessions: 3})
	s1, s2, s3 := initSession(t, base), initSession(t, base), initSession(t, base)
	require.Equal(t, http.StatusOK, post(t, base+PathMCP, listBody, s1).StatusCode) // s2 is now the longest idle
	s4 := initSession(t, base)
	e := rpcError(t, post(t, base+PathMCP, listBody, s2), http.StatusNotFound, codeSessionNotFound)
	require.Contains(t, e.Error.Message, "evicted")
	require.Contains(t, e.Error.Message, "max_sessions")
	for _, h := range []map[string]string{s1, s3, s4} {
		require.Equal(t, http.StatusOK, post(t, base+PathMCP, listBody, h).StatusCode)
	}
	live, _ := b.srv.sessions.counts()
	require.Equal(t, 3, live)
}

// TestHTTPSessions_IdleExpiry: a session with no request for session_idle ends (404 saying
// it expired); one with an open GET stream is not idle.
func TestHTTPSessions_IdleExpiry(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{SessionIdle: 300 * time.Millisecond})
	idle, streaming := initSession(t, base), initSession(t, base)
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+PathMCP, nil)
	require.NoError(t, err)
	for k, v := range streaming {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	testenv.WaitFor(t, "the idle session to expire", func() bool {
		live, _ := b.srv.sessions.counts()
		return live == 1
	})
	e := rpcError(t, post(t, base+PathMCP, listBody, idle), http.StatusNotFound, codeSessionNotFound)
	require.Contains(t, e.Error.Message, "expired")
	require.Equal(t, http.StatusOK, post(t, base+PathMCP, listBody, streaming).StatusCode, "its open GET stream kept it")
}

// TestHTTPSessions_DeleteFreesWhatItHeld: DELETE ends a waiting claim of the session (404
// saying the session ended), closes its GET stream and drops its resource subscriptions;
// the durable state is untouched.
func TestHTTPSessions_DeleteFreesWhatItHeld(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{})
	h := initSession(t, base)
	res := post(t, base+PathMCP, `{"jsonrpc":"2.0","id":5,"method":"resources/subscribe","params":{"uri":"`+StatusURI+`"}}`, h)
	require.Equal(t, http.StatusOK, res.StatusCode)
	b.srv.subs.mu.Lock()
	require.Len(t, b.srv.subs.legacy[h["Mcp-Session-Id"]], 1)
	b.srv.subs.mu.Unlock()

	stream := send(t, http.MethodGet, base+PathMCP, "", h)
	require.Equal(t, http.StatusOK, stream.StatusCode)
	streamEnded := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, bufio.NewReader(stream.Body))
		close(streamEnded)
	}()
	claimed := make(chan *http.Response, 1)
	go func() {
		claimed <- send(t, http.MethodPost, base+PathMCP, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"claim_mission","arguments":{"agent_id":"w","wait_seconds":300}}}`, h)
	}()
	testenv.WaitFor(t, "the claim to wait in the session", func() bool {
		b.srv.sessions.mu.Lock()
		defer b.srv.sessions.mu.Unlock()
		e := b.srv.sessions.live[h["Mcp-Session-Id"]]
		return e != nil && len(e.inflight) == 2 // the GET stream and the claim
	})
	require.Equal(t, http.StatusOK, send(t, http.MethodDelete, base+PathMCP, "", h).StatusCode)
	select {
	case res := <-claimed:
		e := rpcError(t, res, http.StatusNotFound, codeSessionNotFound)
		require.Equal(t, "6", string(e.ID))
		require.Contains(t, e.Error.Message, "ended while this request was in flight")
	case <-time.After(time.Minute): // a bound on what must be cut short: the claim waits 300 s
		t.Fatal("the claim's 300 s wait outlived its session")
	}
	testenv.Receive(t, "the GET stream to end with its session", streamEnded)
	b.srv.subs.mu.Lock()
	require.Empty(t, b.srv.subs.legacy[h["Mcp-Session-Id"]], "the subscriptions went with the session")
	b.srv.subs.mu.Unlock()
	m := b.createMission(map[string]any{"title": "after the session"})
	got := ok[MissionResult](b, "get_mission", map[string]any{"mission_id": m.ID})
	require.Equal(t, "pending", string(got.Mission.State), "the scheduler goes on without the session")
}

// TestHTTPVersions: an unsupported MCP-Protocol-Version header gets 400 with a JSON-RPC error
// listing the supported revisions; an initialize without protocolVersion gets 2025-11-25.
func TestHTTPVersions(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{})
	h := initSession(t, base)
	bad := map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"], "Mcp-Protocol-Version": "1999-01-01"}
	e := rpcError(t, post(t, base+PathMCP, listBody, bad), http.StatusBadRequest, mcp.UNSUPPORTED_PROTOCOL_VERSION)
	require.Contains(t, e.Error.Message, "2025-11-25")
	rpcError(t, send(t, http.MethodGet, base+PathMCP, "", bad), http.StatusBadRequest, mcp.UNSUPPORTED_PROTOCOL_VERSION)
	rpcError(t, send(t, http.MethodDelete, base+PathMCP, "", bad), http.StatusBadRequest, mcp.UNSUPPORTED_PROTOCOL_VERSION)
	require.Equal(t, http.StatusOK, post(t, base+PathMCP, listBody, h).StatusCode, "the session is untouched")

	res := post(t, base+PathMCP, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, nil)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, string(body), `"protocolVersion":"2025-11-25"`)
}

// TestHTTPStateless_NoSession: 2026-07-28 requests, told apart by their protocol version,
// are served beside session mode without a session: mcp-go's client negotiates the revision,
// works even with a forged Mcp-Session-Id header (ignored in that revision), mints no
// session, and GET and DELETE of that revision get 405.
func TestHTTPStateless_NoSession(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{})
	legacy := initSession(t, base)
	c := streamableClient(t, base+PathMCP, map[string]string{"Mcp-Session-Id": sessionIDPrefix + rand.Text()})
	initClient(t, b.ctx, c, "")
	require.Equal(t, mcp.ProtocolVersion20260728, c.ProtocolVersion())
	require.Empty(t, c.GetSessionId())
	res := callOver(t, b.ctx, c, "create_mission", map[string]any{"title": "stateless"})
	require.Contains(t, text(res), `"state":"pending"`)
	live, pending := b.srv.sessions.counts()
	require.Equal(t, [2]int{1, 0}, [2]int{live, pending}, "only the legacy session exists")
	modern := map[string]string{"Mcp-Protocol-Version": mcp.ProtocolVersion20260728}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		require.Equal(t, http.StatusMethodNotAllowed, send(t, m, base+PathMCP, "", modern).StatusCode, m)
	}
	// A 2026-07-28 header on a body without the matching _meta is refused by mcp-go with its
	// JSON-RPC error; the gate passes it through untouched.
	res400 := post(t, base+PathMCP, listBody, modern)
	require.Equal(t, http.StatusBadRequest, res400.StatusCode)
	var e wireError
	require.NoError(t, json.NewDecoder(res400.Body).Decode(&e))
	require.Equal(t, "2", string(e.ID))
	require.NotZero(t, e.Error.Code)
	require.Equal(t, http.StatusOK, post(t, base+PathMCP, listBody, legacy).StatusCode, "session mode beside it")
}

// TestSessionTable_EvictsIdleBeforeBusy: past the bound the longest-idle session goes, but a
// session with a request in flight (an open stream, a waiting claim) only when no idle one
// is left; a pending id (initialize not answered yet) is not valid.
func TestSessionTable_EvictsIdleBeforeBusy(t *testing.T) {
	tb := newSessionTable(2, time.Hour, slog.New(slog.DiscardHandler))
	a := tb.Generate()
	_, err := tb.Validate(a)
	require.ErrorIs(t, err, errUnknownSession, "pending until its initialize succeeded")
	require.Empty(t, tb.confirm(a))
	_, found, _ := tb.enter(a, func() {}) // a is used before b, and stays busy
	require.Equal(t, sessionLive, found)
	bID := tb.Generate()
	require.Empty(t, tb.confirm(bID))
	c := tb.Generate()
	require.Equal(t, []string{bID}, tb.confirm(c), "the idle one goes first, though a was used longer ago")
	require.True(t, tb.end(bID, "evicted"))
	d := tb.Generate()
	require.Equal(t, []string{c}, tb.confirm(d), "c is idle, a is not")
	require.True(t, tb.end(c, "evicted"))
	_, found, _ = tb.enter(d, func() {})
	require.Equal(t, sessionLive, found)
	e := tb.Generate()
	require.Equal(t, []string{a}, tb.confirm(e), "every other one busy: the longest idle of them")
	require.False(t, tb.end(c, "again"), "ending an ended session does nothing")
}
