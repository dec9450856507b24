package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// rawHTTP sends one request to the running binary and returns the status, the headers and
// the body.
func rawHTTP(t *testing.T, method, url, body string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	res := testenv.MCPRequest(t, context.Background(), method, url, body, header)
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, string(b)
}

// rawSession initializes a 2025-11-25 session on the binary and returns its headers.
func rawSession(t *testing.T, base string) map[string]string {
	t.Helper()
	code, h, body := rawHTTP(t, http.MethodPost, base+"/mcp", initialize, nil)
	require.Equal(t, http.StatusOK, code, body)
	sid := h.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	code, _, _ = rawHTTP(t, http.MethodPost, base+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	require.Equal(t, http.StatusAccepted, code)
	return hdr
}

// TestHTTP_JSONRPCEdgesOnTheBinary: over Streamable HTTP each malformed message gets 400 and
// its JSON-RPC error (the same code and id as on stdio), a valid request 200 with its id in
// its JSON type, a notification or response 202 with no body, and a body over the cap 413
// with -32700.
func TestHTTP_JSONRPCEdgesOnTheBinary(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	_, base := s.startHTTP(nil)
	h := rawSession(t, base)
	for _, c := range jsonrpcCases() {
		code, _, body := rawHTTP(t, http.MethodPost, base+"/mcp", c.line, h)
		m := parseRPC(t, body)
		require.Equal(t, c.id, string(m.ID), "%s: %s", c.name, body)
		if c.code == 0 {
			require.Equal(t, http.StatusOK, code, c.name)
			require.Nil(t, m.Error, c.name)
			continue
		}
		require.Equal(t, http.StatusBadRequest, code, c.name)
		require.Equal(t, c.code, m.Error.Code, "%s: %s", c.name, m.Error.Message)
	}
	for _, n := range []string{`{"jsonrpc":"2.0","method":"notifications/whatever"}`, `{"jsonrpc":"2.0","id":77,"result":{}}`} {
		code, _, body := rawHTTP(t, http.MethodPost, base+"/mcp", n, h)
		require.Equal(t, http.StatusAccepted, code, n)
		require.Empty(t, strings.TrimSpace(body), n)
	}
	code, _, body := rawHTTP(t, http.MethodPost, base+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+strings.Repeat("x", 64<<20)+`"}}`, h)
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	m := parseRPC(t, body)
	require.Equal(t, "null", string(m.ID))
	require.Equal(t, -32700, m.Error.Code)
}

// TestHTTP_JSONRPCEdgesOnLegacySSE: the legacy /message endpoint refuses the same malformed
// messages with 400 and their JSON-RPC error; a valid request gets 202 and its answer, with
// its id, on the /sse stream.
func TestHTTP_JSONRPCEdgesOnLegacySSE(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	_, base := s.startHTTP(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	events := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				events <- strings.TrimSpace(d)
			}
		}
		close(events)
	}()
	endpoint := <-events
	require.True(t, strings.HasPrefix(endpoint, "/message?sessionId="), endpoint)
	for _, c := range jsonrpcCases() {
		if c.code == 0 {
			continue
		}
		code, _, body := rawHTTP(t, http.MethodPost, base+endpoint, c.line, nil)
		require.Equal(t, http.StatusBadRequest, code, c.name)
		m := parseRPC(t, body+"\n")
		require.Equal(t, c.id, string(m.ID), c.name)
		require.Equal(t, c.code, m.Error.Code, "%s: %s", c.name, m.Error.Message)
	}
	code, _, _ := rawHTTP(t, http.MethodPost, base+endpoint, `{"jsonrpc":"2.0","id":"sse-1","method":"ping"}`, nil)
	require.Equal(t, http.StatusAccepted, code)
	for e := range events {
		if strings.Contains(e, `"sse-1"`) {
			require.JSONEq(t, `{"jsonrpc":"2.0","id":"sse-1","result":{}}`, e)
			return
		}
	}
	t.Fatal("the SSE stream ended before the ping's answer")
}

// TestHTTP_RestartEndsSessionsNotState: a session of one server process gets 404 from the
// next one on the same data dir; the client initializes again and sees the mission it
// created, in session mode (2025-11-25, a new session id) and in the stateless revision
// (2026-07-28, no session at all), both through mcp-go's client.
func TestHTTP_RestartEndsSessionsNotState(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p, base := s.startHTTP(nil)
	h := rawSession(t, base)
	code, _, body := rawHTTP(t, http.MethodPost, base+"/mcp", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"outlives the process"}}}`, h)
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, p.wait())

	_, base = s.startHTTP(nil)
	code, _, body = rawHTTP(t, http.MethodPost, base+"/mcp", `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, h)
	require.Equal(t, http.StatusNotFound, code, body)
	m := parseRPC(t, body)
	require.Equal(t, -32001, m.Error.Code)
	require.Contains(t, m.Error.Message, "initialize")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, version := range []string{mcp.LATEST_LEGACY_PROTOCOL_VERSION, ""} {
		c, err := client.NewStreamableHttpClient(base + "/mcp")
		require.NoError(t, err)
		require.NoError(t, c.Start(ctx))
		var ir mcp.InitializeRequest
		ir.Params.ClientInfo = mcp.Implementation{Name: "restart-test", Version: "0"}
		ir.Params.ProtocolVersion = version
		_, err = c.Initialize(ctx, ir)
		require.NoError(t, err, version)
		if version == "" {
			require.Equal(t, mcp.ProtocolVersion20260728, c.ProtocolVersion())
			require.Empty(t, c.GetSessionId(), "the stateless revision has no session")
		} else {
			require.NotEmpty(t, c.GetSessionId())
			require.NotEqual(t, h["Mcp-Session-Id"], c.GetSessionId())
		}
		var req mcp.CallToolRequest
		req.Params.Name = "list_missions"
		res, err := c.CallTool(ctx, req)
		require.NoError(t, err, version)
		raw, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.Contains(t, string(raw), "outlives the process", version)
		require.NoError(t, c.Close())
	}
}
