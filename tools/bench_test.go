package tools

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// EchoArgs and EchoResult are the reference tool of the benchmark: the cheapest possible
// round trip through the same server, transport and handler plumbing.
type EchoArgs struct {
	Text string `json:"text"`
}

// echoTool is registered only in tests.
func echoTool() Tool {
	return newTool(toolSpec{name: "echo", title: "Echo", group: GroupScheduler, effect: ReadOnly,
		description: "Returns its argument; a reference for measuring the cost of the protocol itself.",
		input:       inputSchema[EchoArgs](), output: outputSchema[EchoArgs](),
		handler: handle(func(_ context.Context, _ mcp.CallToolRequest, a EchoArgs) (EchoArgs, error) { return a, nil })})
}

// stdioPair serves srv over two OS pipes (the framing and syscalls of a real stdio
// transport) and returns an initialised client on the other ends.
func stdioPair(tb testing.TB, ctx context.Context, srv *Server) *client.Client {
	tb.Helper()
	srvIn, cliOut, err := os.Pipe()
	require.NoError(tb, err)
	cliIn, srvOut, err := os.Pipe()
	require.NoError(tb, err)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.ServeStdio(ctx, srvIn, srvOut) })
	c := client.NewClient(transport.NewIO(cliIn, cliOut, nil))
	require.NoError(tb, c.Start(ctx))
	var ir mcp.InitializeRequest
	ir.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "0"}
	_, err = c.Initialize(ctx, ir)
	require.NoError(tb, err)
	tb.Cleanup(func() {
		_ = c.Close()
		cancel()
		_ = cliOut.Close()
		wg.Wait()
		_ = srvIn.Close()
		_ = srvOut.Close()
		_ = cliIn.Close()
	})
	return c
}

// seed creates n missions: 50 taken by five agents (half of them completed), the rest
// pending in voyages of 500. (Acquiring first keeps the seeding fast: picking from 10,000
// pending missions is the scheduler's cost, not the one measured here.)
func seed(tb testing.TB, ctx context.Context, e *engine.Engine, n int) {
	tb.Helper()
	const taken = 50
	for i := range taken {
		_, err := e.CreateMission(ctx, engine.MissionSpec{Title: fmt.Sprintf("taken %d", i),
			WriteArea: []string{fmt.Sprintf("taken%d/**", i)}}, "bench")
		require.NoError(tb, err)
		m, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: fmt.Sprintf("agent-%d", i%5), Start: true})
		require.NoError(tb, err)
		if i%2 == 0 {
			_, err = e.Complete(ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
			require.NoError(tb, err)
		}
	}
	const per = 500
	for i := taken; i < n; i += per {
		spec := engine.VoyageSpec{Title: fmt.Sprintf("voyage %d", i/per)}
		for j := 0; j < per && i+j < n; j++ {
			spec.Missions = append(spec.Missions, engine.MissionSpec{Key: fmt.Sprintf("m%d", j), Title: fmt.Sprintf("mission %d", i+j)})
		}
		_, err := e.Dispatch(ctx, spec, "bench")
		require.NoError(tb, err)
	}
}

// BenchmarkStatusVsEcho measures the round trip of status with 10,000 missions against the
// echo tool on the same server over stdio, interleaved in the same run, and reports p50 and
// p99 of each and their ratio (goal: status ≤ 1.5 × echo).
//
//	go test -run '^$' -bench StatusVsEcho -benchtime 2000x ./tools/
func BenchmarkStatusVsEcho(b *testing.B) {
	ctx := context.Background()
	st, err := teststore.Open(ctx, teststore.Location(b))
	require.NoError(b, err)
	defer st.Close()
	e := engine.New(st, engine.Options{DefaultRepository: b.TempDir()})
	seed(b, ctx, e, 10_000)
	s, err := e.Status(ctx)
	require.NoError(b, err)
	total := 0
	for _, n := range s.Counts {
		total += n
	}
	require.Equal(b, 10_000, total)
	srv, err := New(Deps{Engine: e}, Options{ExtraTools: []Tool{echoTool()}})
	require.NoError(b, err)
	runCtx, stopRun := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if os.Getenv("STATUS_UNCACHED") != "true" { // as serve runs it; STATUS_UNCACHED=true measures the engine path
		wg.Go(func() { _ = srv.Run(runCtx) })
	}
	defer func() { stopRun(); wg.Wait() }()
	c := stdioPair(b, ctx, srv)
	call := func(name string, args map[string]any) time.Duration {
		var req mcp.CallToolRequest
		req.Params.Name, req.Params.Arguments = name, args
		start := time.Now()
		res, err := c.CallTool(ctx, req)
		d := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", name, err, res)
		}
		return d
	}
	for range 200 { // warm up caches, prepared statements and the schema validators
		call("status", nil)
		call("echo", map[string]any{"text": "hi"})
	}
	statusD := make([]time.Duration, 0, b.N)
	echoD := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		statusD = append(statusD, call("status", nil))
		echoD = append(echoD, call("echo", map[string]any{"text": "hi"}))
	}
	b.StopTimer()
	sp50, sp99 := percentile(statusD, 50), percentile(statusD, 99)
	ep50, ep99 := percentile(echoD, 50), percentile(echoD, 99)
	b.ReportMetric(float64(sp50.Microseconds()), "status_p50_µs")
	b.ReportMetric(float64(sp99.Microseconds()), "status_p99_µs")
	b.ReportMetric(float64(ep50.Microseconds()), "echo_p50_µs")
	b.ReportMetric(float64(ep99.Microseconds()), "echo_p99_µs")
	b.ReportMetric(float64(sp50)/float64(ep50), "ratio_p50")
	b.ReportMetric(float64(sp99)/float64(ep99), "ratio_p99")
	b.Logf("10,000 missions over stdio, %d calls each: status p50 %v p99 %v; echo p50 %v p99 %v; ratio p50 %.2f p99 %.2f",
		b.N, sp50, sp99, ep50, ep99, float64(sp50)/float64(ep50), float64(sp99)/float64(ep99))
}

func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

// TestStdio_OverPipes: the stdio transport over real pipes answers tools and keeps working
// for many calls (the benchmark's setup, checked under -race).
func TestStdio_OverPipes(t *testing.T) {
	b := setup(t, setupOpts{noRun: true})
	c := stdioPair(t, b.ctx, b.srv)
	for i := range 20 {
		var req mcp.CallToolRequest
		req.Params.Name = "create_mission"
		req.Params.Arguments = map[string]any{"title": fmt.Sprintf("m%d", i)}
		res, err := c.CallTool(b.ctx, req)
		require.NoError(t, err)
		require.False(t, res.IsError)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "status"
	res, err := c.CallTool(b.ctx, req)
	require.NoError(t, err)
	require.Equal(t, 20, decode[StatusResult](t, res).Total)
}
