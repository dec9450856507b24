package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// A database that is down or goes away (issue 14): serve answers MCP meanwhile, gives up at
// [storage] connect_wait, and a daemon's mission in flight lands once when it is back.

// writeSandboxConfig writes the sandbox's configuration file.
func writeSandboxConfig(t *testing.T, s *sandbox, config string) {
	t.Helper()
	cfg := filepath.Join(s.home, "config", "mcp-scheduler", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
	require.NoError(t, os.WriteFile(cfg, []byte(config), 0o600))
}

// mcpHTTPClient is a real MCP client over Streamable HTTP at base, initialized.
func mcpHTTPClient(t *testing.T, base string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), testenv.WaitDeadline(t))
	defer cancel()
	c, err := client.NewStreamableHttpClient(base + "/mcp")
	require.NoError(t, err)
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { _ = c.Close() })
	var ir mcp.InitializeRequest
	ir.Params.ClientInfo = mcp.Implementation{Name: "dbdown-test", Version: "0"}
	_, err = c.Initialize(ctx, ir)
	require.NoError(t, err, "initialize works whatever the database")
	return c
}

// callStatus calls the status tool and returns whether it was an isError result and its text.
func callStatus(t *testing.T, c *client.Client) (bool, string) {
	t.Helper()
	return callTool(t, c, "status")
}

// callTool calls the tool name with no arguments and returns whether it was an isError
// result and its text.
func callTool(t *testing.T, c *client.Client, name string) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), testenv.WaitDeadline(t))
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name = name
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err, "a tool call while the database is down is answered, not failed")
	var text strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return res.IsError, text.String()
}

// serve --http started while its PostgreSQL server is down listens at once: initialize works
// and a tool call answers, as a tool error, that the database (URL without its password) is
// not reachable yet, why, and until when it is retried. Once the server is up the same client's
// calls work, without reconnecting.
func TestPostgres_ServeAnswersWhileTheDatabaseIsDownThenWorks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := pgtest.Private(t, pgtest.ClusterOptions{Password: "pw-not-for-logs"})
	require.NoError(t, c.Halt(ctx))
	s := newSandbox(t)
	writeSandboxConfig(t, s, "[storage]\nconnect_wait = \"10m\"\n")
	p, base := s.startHTTP([]string{EnvDatabaseURL + "=" + c.URL("postgres")})
	defer p.kill()
	mc := mcpHTTPClient(t, base)
	isErr, text := callStatus(t, mc)
	require.True(t, isErr, text)
	for _, want := range []string{"unavailable, try again later", "postgres://postgres:xxxxx@" + c.Addr(), "is not reachable yet",
		"connection refused", "retrying until", "[storage] connect_wait"} {
		require.Contains(t, text, want)
	}
	require.NotContains(t, text, "pw-not-for-logs")
	require.Contains(t, p.stderrText(), "database not reachable; retrying")

	require.NoError(t, c.Resume(ctx))
	testenv.WaitFor(t, "status to work once the database is up", func() bool {
		isErr, text = callStatus(t, mc)
		return !isErr
	})
	require.Contains(t, text, `"loop"`)
	testenv.WaitFor(t, "the loop to start", func() bool { return strings.Contains(p.stderrText(), "mcp-scheduler serving") })
	require.NotContains(t, p.stderrText(), "pw-not-for-logs")
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, p.wait())
}

// serve over stdio with no server at all answers initialize and tool calls (a tool error
// saying the database is not reachable yet), then exits 1 when [storage] connect_wait runs
// out, saying so.
func TestPostgres_ServeStdioGivesUpAfterConnectWait(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there
	s := newSandbox(t)
	writeSandboxConfig(t, s, "[storage]\nconnect_wait = \"20s\"\n")
	p := s.start([]string{EnvDatabaseURL + "=postgres://sched:hunter2@" + addr + "/db?sslmode=disable"}, "serve")
	defer p.kill()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	require.Contains(t, p.next(), `"serverInfo"`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"status","arguments":{}}}`)
	line := p.next()
	require.Contains(t, line, `"isError":true`)
	require.Contains(t, line, "is not reachable yet")
	require.Contains(t, line, "sched:xxxxx@"+addr)
	require.NotContains(t, line, "hunter2")
	require.Equal(t, 1, p.wait(), "a wait that runs out exits non-zero")
	errs := p.stderrText()
	require.Contains(t, errs, "not reachable after")
	require.Contains(t, errs, "connect_wait")
	require.Contains(t, errs, "stopped serving")
	require.NotContains(t, errs, "hunter2")
}

var daemonHTTP = regexp.MustCompile(`serving MCP over HTTP .*?addr=(\S+)`)

// A daemon whose PostgreSQL server stops while a mission runs and starts again once the
// agent has ended (its result waiting to be recorded): meanwhile its failed steps are logged
// with the reason and MCP calls answer that the database is not reachable; once it is back
// the result is recorded, the mission lands exactly once (one landing record, one commit on
// main), and MCP calls work again.
func TestPostgres_DaemonSurvivesTheServerGoingAwayMidRun(t *testing.T) {
	ctx := t.Context()
	c := pgtest.Private(t, pgtest.ClusterOptions{})
	s := newSandbox(t)
	s.env = append(s.env, EnvDatabaseURL+"="+c.URL("postgres"))
	writeSandboxConfig(t, s, reloadConfig("0"))
	d := s.start(nil, "daemon", "--http", "127.0.0.1:0")
	defer func() {
		if d.cmd.ProcessState == nil {
			_ = d.cmd.Process.Signal(os.Interrupt)
			d.wait()
		}
	}()
	var base string
	testenv.WaitFor(t, "the daemon's HTTP listener", func() bool {
		if m := daemonHTTP.FindStringSubmatch(d.stderrText()); m != nil {
			base = "http://" + m[1]
			return true
		}
		return d.cmd.ProcessState != nil
	})
	require.NotEmpty(t, base, d.stderrText())
	mc := mcpHTTPClient(t, base)
	m := cliJSON[domain.Mission](s, "go", "outlives an outage", "--write-area", "out.txt",
		"--brief", "@write out.txt hello\n@commit add out.txt\n@sleep 15s\n@done ok")
	show := func() engine.MissionDetail { return cliJSON[engine.MissionDetail](s, "missions", "show", m.ID) }
	testenv.WaitFor(t, "the mission to run", func() bool { return show().Mission.State == domain.StateRunning })

	require.NoError(t, c.Halt(ctx))
	testenv.WaitFor(t, "an MCP call to say the database is not reachable", func() bool {
		isErr, text := callStatus(t, mc)
		return isErr && strings.Contains(text, "is not reachable") && strings.Contains(text, c.Addr())
	})
	testenv.WaitFor(t, "the daemon to log a failed step with the reason", func() bool {
		return strings.Contains(d.stderrText(), "is not reachable")
	})
	// The agent ends while the server is down: its result waits to be recorded.
	testenv.WaitFor(t, "the agent's result to wait for the database", func() bool {
		return strings.Contains(d.stderrText(), "result not recorded yet: the database is unavailable; retrying")
	})
	require.NoError(t, c.Resume(ctx))

	testenv.WaitFor(t, "the mission to complete and land", func() bool {
		got := show().Mission
		return got.State == domain.StateCompleted && got.Landing.Satisfies()
	})
	landed := 0
	for _, l := range show().Landings {
		if l.Status == "landed" || l.Status == "already_landed" {
			landed++
		}
	}
	require.Equal(t, 1, landed, "one landing record: %+v", show().Landings)
	out, err := exec.Command("git", "-C", s.repo, "log", "--oneline", "main", "--grep", "Mission "+m.ID).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Len(t, strings.Split(strings.TrimSpace(string(out)), "\n"), 1, "one commit of the mission on main:\n%s", out)
	isErr, text := callStatus(t, mc)
	require.False(t, isErr, text)
	require.NotContains(t, d.stderrText(), "result not recorded mission_id", "no result was given up on")
	require.NotContains(t, d.stderrText(), "rate-limit window not lifted", "an outage is no rate-limit error (the fresh-user trial saw one)")
	for _, l := range strings.Split(d.stderrText(), "\n") {
		if strings.Contains(l, "not reachable") || strings.Contains(l, "reconnect") || strings.Contains(l, "repeated=") {
			t.Log(l) // what a person reads during the outage
		}
	}
}

// A daemon with no server to reach logs each retry with its cause on stderr and exits 1 when
// [storage] connect_wait runs out, never showing the password.
func TestPostgres_DaemonGivesUpAfterConnectWait(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there
	s := newSandbox(t)
	writeSandboxConfig(t, s, "[storage]\nconnect_wait = \"3s\"\n")
	d := s.start([]string{EnvDatabaseURL + "=postgres://sched:hunter2@" + addr + "/db?sslmode=disable"}, "daemon")
	defer d.kill()
	require.Equal(t, 1, d.wait())
	errs := d.stderrText()
	require.Contains(t, errs, "database not reachable; retrying")
	require.Contains(t, errs, "connection refused")
	require.Contains(t, errs, "not reachable after")
	require.Contains(t, errs, "[storage] connect_wait is 3s")
	require.NotContains(t, errs, "hunter2")
}
