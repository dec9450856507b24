package tools

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

const testToken = "test-token-8c1f"

// httpServer serves b's MCP server over HTTP on a free loopback port until the test ends.
func httpServer(t testing.TB, b *bundle, opt HTTPOptions) (base string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(b.ctx)
	addrc := make(chan net.Addr, 1)
	if opt.Addr == "" {
		opt.Addr = "127.0.0.1:0"
	}
	opt.Ready = func(a net.Addr) { addrc <- a }
	errc := make(chan error, 1)
	go func() { errc <- b.srv.ServeHTTP(ctx, opt) }()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-errc:
		t.Fatalf("serve: %v", err)
	}
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-errc })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + addr.String(), stop
}

func post(t *testing.T, url, body string, header map[string]string) *http.Response {
	t.Helper()
	return testenv.MCPRequest(t, context.Background(), http.MethodPost, url, body, header)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// TestB29_HTTPAuth: without the token 401 with WWW-Authenticate; a wrong token 401; the
// right one is served; the comparison is over digests in constant time (guard.authorized).
func TestB29_HTTPAuth(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{Token: testToken})
	for _, path := range []string{PathMCP, PathSSE, PathMessage} {
		for _, auth := range []string{"", "Bearer wrong", "Basic " + testToken, "Bearer " + testToken + "x", "Bearer"} {
			res := post(t, base+path, initBody, map[string]string{"Authorization": auth})
			require.Equal(t, http.StatusUnauthorized, res.StatusCode, "%s %q", path, auth)
			require.Equal(t, `Bearer realm="mcp-scheduler"`, res.Header.Get("WWW-Authenticate"))
		}
	}
	res := post(t, base+PathMCP, initBody, map[string]string{"Authorization": "Bearer " + testToken})
	require.Equal(t, http.StatusOK, res.StatusCode)
	res = post(t, base+PathMCP, initBody, map[string]string{"Authorization": "bearer " + testToken})
	require.Equal(t, http.StatusOK, res.StatusCode, "the scheme is case-insensitive")
}

// TestHTTP_OriginAndHost: a foreign Origin gets 403, loopback origins and configured ones are
// served; a foreign Host on a loopback listener (DNS rebinding) gets 403.
func TestHTTP_OriginAndHost(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{AllowedOrigins: []string{"https://app.example.com"}})
	for origin, want := range map[string]int{
		"http://evil.example":       http.StatusForbidden,
		"null":                      http.StatusForbidden,
		"http://localhost.evil.com": http.StatusForbidden,
		"http://localhost:6274":     http.StatusOK,
		"http://127.0.0.1:3000":     http.StatusOK,
		"https://app.example.com":   http.StatusOK,
	} {
		res := post(t, base+PathMCP, initBody, map[string]string{"Origin": origin})
		require.Equal(t, want, res.StatusCode, origin)
	}
	res := post(t, base+PathMCP, initBody, map[string]string{"Host": "attacker.example:80"})
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	res = post(t, base+PathMCP, initBody, map[string]string{"Host": "localhost"})
	require.Equal(t, http.StatusOK, res.StatusCode)
}

// TestB29_NonLoopbackNeedsAToken: binding every interface (or any non-loopback address)
// without a token is refused before anything listens.
func TestB29_NonLoopbackNeedsAToken(t *testing.T) {
	for addr, okk := range map[string]bool{":8080": false, "0.0.0.0:0": false, "[::]:0": false, "192.0.2.1:80": false,
		"127.0.0.1:0": true, "localhost:0": true, "[::1]:0": true, "127.1.2.3:9": true} {
		err := CheckBind(addr, false)
		if okk {
			require.NoError(t, err, addr)
		} else {
			require.ErrorIs(t, err, ErrInsecureBind, addr)
		}
		require.NoError(t, CheckBind(addr, true), "with a token any address is fine: %s", addr)
	}
	require.Error(t, CheckBind("nonsense", true))
	b := setup(t, setupOpts{})
	err := b.srv.ServeHTTP(b.ctx, HTTPOptions{Addr: "0.0.0.0:0"})
	require.ErrorIs(t, err, ErrInsecureBind)
}

// TestB01_HTTPNotificationsGet202: a POST holding only a notification (or a response) is
// acknowledged with 202 Accepted and an empty body, whatever the method.
func TestB01_HTTPNotificationsGet202(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{})
	res := post(t, base+PathMCP, initBody, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	sid := res.Header.Get("Mcp-Session-Id")
	h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications/made_up","params":{"x":1}}`,
		`{"jsonrpc":"2.0","method":"tools/list"}`, // no id: a notification, even with a request's method
		`{"jsonrpc":"2.0","id":99,"result":{}}`,   // a response to nothing the server asked
		`{"jsonrpc":"2.0","id":98,"result":{"x":1}}`,
		`{"jsonrpc":"2.0","id":"not-ours","result":{"x":1}}`,
		`{"jsonrpc":"2.0","id":97,"error":{"code":-1,"message":"no"}}`,
	} {
		r := post(t, base+PathMCP, body, h)
		got, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusAccepted, r.StatusCode, body)
		require.Empty(t, strings.TrimSpace(string(got)), body)
	}
}

func streamableClient(t *testing.T, url string, headers map[string]string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(headers))
	require.NoError(t, err)
	return c
}

func initClient(t *testing.T, ctx context.Context, c *client.Client, protocol string) {
	t.Helper()
	require.NoError(t, c.Start(ctx))
	var ir mcp.InitializeRequest
	ir.Params.ClientInfo = mcp.Implementation{Name: "http-test", Version: "0"}
	ir.Params.ProtocolVersion = protocol
	_, err := c.Initialize(ctx, ir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
}

func callOver(t *testing.T, ctx context.Context, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err, name)
	require.False(t, res.IsError, "%s: %s", name, text(res))
	return res
}

// TestHTTP_StreamableAndSSEClients drive the tools through mcp-go's own clients over both
// HTTP transports, with the bearer token.
func TestHTTP_StreamableAndSSEClients(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{Token: testToken, KeepAlive: 50 * time.Millisecond})
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	for _, proto := range []string{"", mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		c := streamableClient(t, base+PathMCP, auth)
		initClient(t, b.ctx, c, proto)
		res := callOver(t, b.ctx, c, "create_mission", map[string]any{"title": "over http " + proto})
		require.Contains(t, text(res), `"state":"pending"`)
		callOver(t, b.ctx, c, "status", nil)
	}
	sc, err := client.NewSSEMCPClient(base+PathSSE, transport.WithHeaders(auth))
	require.NoError(t, err)
	initClient(t, b.ctx, sc, mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	st := decode[StatusResult](t, callOver(t, b.ctx, sc, "status", nil))
	require.Equal(t, 2, st.Total)
	tools, err := sc.ListTools(b.ctx, mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.Len(t, tools.Tools, len(briefTools)+len(extraTools))

	bad, err := client.NewSSEMCPClient(base + PathSSE)
	require.NoError(t, err)
	require.Error(t, bad.Start(b.ctx), "no token, no stream")
}

// TestHTTP_SSEKeepalives: an idle SSE stream receives keepalives, as SSE comments (a ping
// request would collide with the calls of mcp-go's SSE client, which match responses by id
// alone: TestHTTP_StreamableAndSSEClients runs with pings every 50 ms).
func TestHTTP_SSEKeepalives(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{KeepAlive: 50 * time.Millisecond})
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+PathSSE, nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	sc := bufio.NewScanner(res.Body)
	var endpoint string
	pings := 0
	for pings < 2 && sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "data: /message?sessionId=") || strings.HasPrefix(line, "data:/message?sessionId=") {
			endpoint = line
		}
		if line == strings.TrimSpace(keepAliveComment) {
			pings++
		}
		require.NotContains(t, line, `"method":"ping"`)
	}
	require.NotEmpty(t, endpoint, "the endpoint event names /message")
	require.Equal(t, 2, pings)
}

// TestHTTP_GracefulShutdown: cancelling the context ends ServeHTTP promptly even with an
// open SSE stream and a claim waiting for work, and the listener is closed.
func TestHTTP_GracefulShutdown(t *testing.T) {
	b := setup(t, setupOpts{})
	base, stop := httpServer(t, b, HTTPOptions{Token: testToken})
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	sc, err := client.NewSSEMCPClient(base+PathSSE, transport.WithHeaders(auth))
	require.NoError(t, err)
	initClient(t, b.ctx, sc, mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	hc := streamableClient(t, base+PathMCP, auth)
	initClient(t, b.ctx, hc, "")
	waiting := make(chan error, 1)
	go func() {
		var req mcp.CallToolRequest
		req.Params.Name = "claim_mission"
		req.Params.Arguments = map[string]any{"agent_id": "w", "wait_seconds": 300}
		_, err := hc.CallTool(b.ctx, req)
		waiting <- err
	}()
	waitClaimsWaiting(t, 1)
	start := time.Now()
	require.NoError(t, stop())
	require.Less(t, time.Since(start), time.Minute, "stop does not wait for the claim's 300 s wait")
	select {
	case <-waiting:
	case <-time.After(10 * time.Second): // a bound on what must be cut short: the claim waits 300 s
		t.Fatal("the waiting claim was not released")
	}
	_, err = http.Post(base+PathMCP, "application/json", strings.NewReader(initBody))
	var op *net.OpError
	require.True(t, errors.As(err, &op), "the listener is closed: %v", err)
}

// TestHTTP_ResourceNotifications: over Streamable HTTP, a 2026-07-28 client hears about a
// watched mission on its subscriptions/listen stream, and a legacy client on its session.
func TestHTTP_ResourceNotifications(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{})
	m := b.createMission(map[string]any{"title": "watched over http"})
	uri := "mission://" + m.ID
	heard := func(n *notes) func() bool {
		return func() bool {
			for _, x := range n.byMethod(mcp.MethodNotificationResourceUpdated) {
				if x.Params.AdditionalFields["uri"] == uri {
					return true
				}
			}
			return false
		}
	}
	modern := streamableClient(t, base+PathMCP, nil)
	mn := &notes{}
	modern.OnNotification(mn.add)
	initClient(t, b.ctx, modern, "")
	require.Equal(t, mcp.ProtocolVersion20260728, modern.ProtocolVersion())
	stop, err := modern.ListenAsync(b.ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}}, nil)
	require.NoError(t, err)
	defer stop()
	testenv.WaitFor(t, "the listen acknowledgement", func() bool {
		return len(mn.byMethod(mcp.MethodNotificationSubscriptionsAcknowledged)) > 0
	})

	// A legacy client receives server notifications on its GET stream (continuous listening).
	legacy, err := client.NewStreamableHttpClient(base+PathMCP, transport.WithContinuousListening())
	require.NoError(t, err)
	ln := &notes{}
	legacy.OnNotification(ln.add)
	initClient(t, b.ctx, legacy, mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	require.NoError(t, legacy.Subscribe(b.ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}}))

	ok[MissionResult](b, "update_mission", map[string]any{"mission_id": m.ID, "priority": 9})
	testenv.WaitFor(t, "the listen stream's notification", heard(mn))
	testenv.WaitFor(t, "the legacy session's notification", heard(ln))
}
