package dashboard_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// fixture is one test's server: a real SQLite store in a temp dir, the engine, the MCP
// server listening on a loopback port with the dashboard mounted, as serve --http does.
type fixture struct {
	t     testing.TB
	ctx   context.Context
	eng   *engine.Engine
	dir   string // the data dir (attempt logs live under attempts/)
	base  string // http://127.0.0.1:PORT
	token string
}

func start(t testing.TB, token string) *fixture {
	t.Helper()
	dir := t.TempDir()
	st := teststore.OpenAt(t, teststore.LocationIn(dir))
	eng := engine.New(st, engine.Options{DefaultRepository: dir})
	return serve(t, token, dir, tools.Deps{Engine: eng, Logs: tools.FileLogs{DataDir: dir}})
}

// serve starts the MCP server over deps on a loopback port with the dashboard mounted (dir
// is the data dir).
func serve(t testing.TB, token, dir string, deps tools.Deps) *fixture {
	t.Helper()
	return serveOn(t, "127.0.0.1:0", token, dir, deps)
}

// serveOn is serve on the listen address addr ("0.0.0.0:0": every interface, a LAN
// dashboard); the fixture's base URL is on 127.0.0.1 at the port it got.
func serveOn(t testing.TB, listen, token, dir string, deps tools.Deps) *fixture {
	t.Helper()
	return serveTokens(t, listen, tools.FixedToken(token), token, dir, deps)
}

// serveTokens is serveOn with the listener's token set (token is the one getJSON sends).
func serveTokens(t testing.TB, listen string, tokens *tools.Tokens, token, dir string, deps tools.Deps) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	eng := deps.Engine
	srv, err := tools.New(deps, tools.Options{Version: "test"})
	require.NoError(t, err)
	dash, err := dashboard.New(dashboard.Options{Deps: deps, Tokens: tokens})
	require.NoError(t, err)
	addrc := make(chan net.Addr, 1)
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	wg.Go(func() { _ = srv.Run(ctx) })
	wg.Go(func() {
		errc <- srv.ServeHTTP(ctx, tools.HTTPOptions{Addr: listen, Tokens: tokens, Dashboard: dash,
			Ready: func(a net.Addr) { addrc <- a }})
	})
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-errc:
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	_, port, err := net.SplitHostPort(addr.String())
	require.NoError(t, err)
	return &fixture{t: t, ctx: ctx, eng: eng, dir: dir, base: "http://" + net.JoinHostPort("127.0.0.1", port), token: token}
}

// voyage dispatches a voyage of four missions: b and c depend on a (hard, soft), d is
// serialized after b, and c and d share a write area (an inferred conflict).
func (f *fixture) voyage() engine.Dispatched {
	f.t.Helper()
	d, err := f.eng.Dispatch(f.ctx, engine.VoyageSpec{Title: "handbook", Missions: []engine.MissionSpec{
		{Key: "a", Title: "write the outline", WriteArea: []string{"outline.md"}},
		{Key: "b", Title: "write chapter one", WriteArea: []string{"one.md"}},
		{Key: "c", Title: "write chapter two", WriteArea: []string{"chapters/**"}},
		{Key: "d", Title: "write the index", WriteArea: []string{"chapters/index.md"}},
	}, Edges: []engine.EdgeSpec{
		{Mission: "b", DependsOn: "a"},
		{Mission: "c", DependsOn: "a", Type: domain.EdgeSoft},
		{Mission: "d", DependsOn: "b", Type: domain.EdgeSerialization},
	}}, "test")
	require.NoError(f.t, err)
	return d
}

// run acquires and starts mission id for agent "tester" (pull mode).
func (f *fixture) run(id string) domain.Mission {
	f.t.Helper()
	m, err := f.eng.Acquire(f.ctx, engine.AcquireRequest{AgentID: "tester", MissionID: id, Start: true})
	require.NoError(f.t, err)
	require.Equal(f.t, domain.StateRunning, m.State)
	return m
}

// block moves a running mission to blocked with an escalation.
func (f *fixture) block(m domain.Mission) domain.Escalation {
	f.t.Helper()
	esc, err := f.eng.Block(f.ctx, engine.BlockRequest{MissionID: m.ID, Epoch: &m.Lease.Epoch, Reason: "the outline needs a decision",
		DecisionRequired: "keep the old outline or start over", Evidence: []string{"outline.md has two conflicting plans"}}, "tester")
	require.NoError(f.t, err)
	return esc
}

// do sends a request with the given headers and returns status and body.
func (f *fixture) do(method, path, body string, header map[string]string) (int, string, http.Header) {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.ctx, method, f.base+path, strings.NewReader(body))
	require.NoError(f.t, err)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	c := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return resp.StatusCode, string(b), resp.Header
}

// getJSON reads an API path with the bearer token (when set) into v.
func (f *fixture) getJSON(path string, v any) {
	f.t.Helper()
	h := map[string]string{}
	if f.token != "" {
		h["Authorization"] = "Bearer " + f.token
	}
	code, body, _ := f.do(http.MethodGet, path, "", h)
	require.Equal(f.t, http.StatusOK, code, body)
	require.NoError(f.t, json.Unmarshal([]byte(body), v), body)
}
