package main

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// startClusterHTTPNode starts a cluster node (startClusterNode) that also serves MCP over
// HTTP on a free loopback port, and returns it with its base URL once its loop runs.
func startClusterHTTPNode(t *testing.T, s *sandbox, url, name string) (*clusterNode, string) {
	t.Helper()
	n := startClusterNode(t, s, url, name, "--http", "127.0.0.1:0")
	var base string
	testenv.WaitFor(t, name+"'s HTTP listener", func() bool {
		if m := daemonHTTP.FindStringSubmatch(n.p.stderrText()); m != nil {
			base = "http://" + m[1]
			return true
		}
		return n.p.cmd.ProcessState != nil
	})
	require.NotEmpty(t, base, n.p.stderrText())
	// The listener opens before the database is connected (daemon --http serves meanwhile).
	testenv.WaitFor(t, name+"'s loop", func() bool {
		return strings.Contains(n.p.stderrText(), "mcp-scheduler daemon running") || n.p.cmd.ProcessState != nil
	})
	return n, base
}

// Two nodes of a cluster serve MCP over HTTP. A session made on n1 works on n1; its id sent
// to n2 gets 404 with -32001 and a message naming n2 and what to do (route sticky by
// Mcp-Session-Id, or the stateless revision); a stateless 2026-07-28 client of n2 sees the
// mission the session created on n1 (docs/mcp.md, "Several nodes behind one address").
func TestCluster_SessionsStayOnTheirNodeStatelessReachesAny(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	url := pgtest.Database(t)
	stop := func(n *clusterNode) {
		_ = n.p.cmd.Process.Signal(os.Interrupt)
		n.p.wait()
	}
	n1, base1 := startClusterHTTPNode(t, s, url, "n1")
	defer stop(n1)
	n2, base2 := startClusterHTTPNode(t, s, url, "n2")
	defer stop(n2)

	h := rawSession(t, base1)
	create := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"made through n1"}}}`
	code, _, body := rawHTTP(t, http.MethodPost, base1+"/mcp", create, h)
	require.Equal(t, http.StatusOK, code, body)
	require.NotContains(t, body, `"isError":true`, body)

	code, _, body = rawHTTP(t, http.MethodPost, base2+"/mcp", `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, h)
	require.Equal(t, http.StatusNotFound, code, body)
	m := parseRPC(t, body)
	require.Equal(t, -32001, m.Error.Code)
	for _, want := range []string{"node n2 of a cluster", "sticky by Mcp-Session-Id", "2026-07-28", "initialize"} {
		require.Contains(t, m.Error.Message, want)
	}
	code, _, body = rawHTTP(t, http.MethodPost, base1+"/mcp", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, h)
	require.Equal(t, http.StatusOK, code, "the session still works on its own node: %s", body)

	mc := mcpHTTPClient(t, base2) // stateless: no session to route
	isErr, text := callTool(t, mc, "list_missions")
	require.False(t, isErr, text)
	require.Contains(t, text, "made through n1")
}

// daemon --http started while its PostgreSQL server is down serves MCP at once: a tool call
// answers that the database is not reachable yet; once the server is up the same client's
// calls work and the daemon's loop starts.
func TestPostgres_DaemonHTTPAnswersWhileTheDatabaseIsDownThenWorks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := pgtest.Private(t, pgtest.ClusterOptions{})
	require.NoError(t, c.Halt(ctx))
	s := newSandbox(t)
	writeSandboxConfig(t, s, "[storage]\nconnect_wait = \"10m\"\n")
	d := s.start([]string{EnvDatabaseURL + "=" + c.URL("postgres")}, "daemon", "--http", "127.0.0.1:0")
	defer d.kill()
	var base string
	testenv.WaitFor(t, "the daemon's HTTP listener while the database is down", func() bool {
		if m := daemonHTTP.FindStringSubmatch(d.stderrText()); m != nil {
			base = "http://" + m[1]
			return true
		}
		return d.cmd.ProcessState != nil
	})
	require.NotEmpty(t, base, d.stderrText())
	mc := mcpHTTPClient(t, base)
	isErr, text := callStatus(t, mc)
	require.True(t, isErr, text)
	require.Contains(t, text, "is not reachable yet")
	require.NotContains(t, d.stderrText(), "mcp-scheduler daemon running", "the loop waits for the database")

	require.NoError(t, c.Resume(ctx))
	testenv.WaitFor(t, "status to work once the database is up", func() bool {
		isErr, text = callStatus(t, mc)
		return !isErr
	})
	testenv.WaitFor(t, "the loop to start", func() bool { return strings.Contains(d.stderrText(), "mcp-scheduler daemon running") })
	require.NoError(t, d.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, d.wait())
}
