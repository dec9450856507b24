package tools

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// BenchmarkHTTPGate measures what the session gate (httpgate.go) adds to a Streamable HTTP
// round trip: the echo tool called by a 2025-11-25 client in session mode through ServeHTTP
// (guard, gate, session table, mcp-go) against the same call on the same server through
// mcp-go's Streamable HTTP handler mounted bare on another loopback port (mcp-go's default
// session manager), interleaved in the same run. It reports p50 and p99 of each and the
// ratio; 8 KiB of text in each call make the gate's body check visible too.
//
//	go test -run '^$' -bench HTTPGate -benchtime 3000x ./tools/
func BenchmarkHTTPGate(b *testing.B) {
	ctx := context.Background()
	st, err := teststore.Open(ctx, teststore.Location(b))
	require.NoError(b, err)
	defer st.Close()
	srv, err := New(Deps{Engine: engine.New(st, engine.Options{DefaultRepository: b.TempDir()})}, Options{ExtraTools: []Tool{echoTool()}})
	require.NoError(b, err)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeHTTP(runCtx, HTTPOptions{Addr: "127.0.0.1:0", Ready: func(a net.Addr) { addrc <- a }})
	}()
	gated := "http://" + (<-addrc).String() + PathMCP
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	bare := &http.Server{Handler: server.NewStreamableHTTPServer(srv.mcp), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = bare.Serve(ln) }()
	defer func() { _ = bare.Close() }()

	connect := func(url string) *client.Client {
		c, err := client.NewStreamableHttpClient(url)
		require.NoError(b, err)
		require.NoError(b, c.Start(ctx))
		var ir mcp.InitializeRequest
		ir.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "0"}
		ir.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
		_, err = c.Initialize(ctx, ir)
		require.NoError(b, err)
		require.NotEmpty(b, c.GetSessionId(), "session mode")
		return c
	}
	g, r := connect(gated), connect("http://"+ln.Addr().String()+PathMCP)
	text := strings.Repeat("x", 8<<10)
	call := func(c *client.Client) time.Duration {
		var req mcp.CallToolRequest
		req.Params.Name, req.Params.Arguments = "echo", map[string]any{"text": text}
		start := time.Now()
		res, err := c.CallTool(ctx, req)
		d := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("echo: %v %v", err, res)
		}
		return d
	}
	for range 200 {
		call(g)
		call(r)
	}
	gd, rd := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		gd = append(gd, call(g))
		rd = append(rd, call(r))
	}
	b.StopTimer()
	gp50, gp99, rp50, rp99 := percentile(gd, 50), percentile(gd, 99), percentile(rd, 50), percentile(rd, 99)
	b.ReportMetric(float64(gp50.Microseconds()), "gated_p50_µs")
	b.ReportMetric(float64(gp99.Microseconds()), "gated_p99_µs")
	b.ReportMetric(float64(rp50.Microseconds()), "bare_p50_µs")
	b.ReportMetric(float64(rp99.Microseconds()), "bare_p99_µs")
	b.ReportMetric(float64(gp50)/float64(rp50), "ratio_p50")
	b.ReportMetric(float64(gp99)/float64(rp99), "ratio_p99")
	b.Logf("echo of 8 KiB in session mode, %d calls each: gated p50 %v p99 %v; bare mcp-go p50 %v p99 %v; ratio p50 %.2f p99 %.2f",
		b.N, gp50, gp99, rp50, rp99, float64(gp50)/float64(rp50), float64(gp99)/float64(rp99))
	require.NoError(b, g.Close())
	require.NoError(b, r.Close())
	stop()
	require.NoError(b, <-done)
}
