package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// rpc is a JSON-RPC 2.0 message as it appears on the wire.
type rpc struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// parseRPC fails the test unless line is exactly one JSON-RPC 2.0 message.
func parseRPC(t *testing.T, line string) rpc {
	t.Helper()
	require.True(t, strings.HasSuffix(line, "\n"), "a whole line: %q", line)
	var m rpc
	require.NoError(t, json.Unmarshal([]byte(line), &m), "stdout carries only JSON-RPC, got %q", line)
	require.Equal(t, "2.0", m.JSONRPC, line)
	require.True(t, m.ID != nil || m.Method != "", "a response or a notification: %q", line)
	return m
}

// TestB01_StdioNotificationsGetNoReply: notifications (known, unknown, even with a
// request's method name) get no response: exactly one line per request on stdout.
func TestB01_StdioNotificationsGetNoReply(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.start(nil, "serve")
	p.send(initialize)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}`)
	p.send(`{"jsonrpc":"2.0","method":"tools/list"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	ids := map[string]bool{}
	for range 2 {
		m := parseRPC(t, p.next())
		require.Nil(t, m.Error)
		ids[string(m.ID)] = true
	}
	require.Equal(t, map[string]bool{"1": true, "2": true}, ids)
	require.NoError(t, p.stdin.Close())
	require.Equal(t, 0, p.wait(), "stdin closed: the server exits cleanly")
	for l := range p.lines { // all of stdout, to its end
		t.Fatalf("unexpected output after the two responses: %q", l)
	}
}

// TestB05_StdoutIsOnlyJSONRPC: with debug logging, a fresh data dir (the migrations run and
// log), tool calls that succeed, fail as caller errors and fail as server errors, every
// stdout line is one JSON-RPC message and the logs are on stderr.
func TestB05_StdoutIsOnlyJSONRPC(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.start(nil, "serve", "--log-level", "debug")
	calls := []string{
		initialize,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"log a lot"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"dispatch","arguments":{"title":"v","missions":[{"key":"a","title":"a"},{"key":"b","title":"b","depends_on":["a"]}]}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_mission","arguments":{"mission_id":"../../etc"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"claim_mission","arguments":{"agent_id":"w"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"scheduler://status"}}`,
		`{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"plan_voyage","arguments":{"goal":"g"}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"status","arguments":{}}}`,
	}
	for _, c := range calls {
		p.send(c)
	}
	got := map[string]rpc{}
	for len(got) < len(calls)-1 {
		m := parseRPC(t, p.next())
		if m.ID != nil {
			got[string(m.ID)] = m
		}
	}
	require.Nil(t, got["3"].Error)
	require.Contains(t, string(got["5"].Result), `"isError":true`, "a caller error is a result")
	require.NotNil(t, got["9"].Error, "an unknown method is a JSON-RPC error")
	require.NoError(t, p.stdin.Close())
	require.Equal(t, 0, p.wait())
	for l := range p.lines {
		parseRPC(t, l)
	}
	logs := p.stderrText()
	require.Contains(t, logs, "migrated database from schema 0 to ", "the migration logged on stderr")
	require.Contains(t, logs, "DBG mcp.tool", "debug records on stderr")
	require.Contains(t, logs, "mcp-scheduler serving")
}

// TestServe_StopsOnFirstSignal: SIGINT (Claude Code's first signal) or SIGTERM ends a stdio
// server at once, with exit code 0, even with a client still connected.
func TestServe_StopsOnFirstSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			s := newSandbox(t)
			p := s.start(nil, "serve")
			p.send(initialize)
			parseRPC(t, p.next())
			p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"claim_mission","arguments":{"agent_id":"w","wait_seconds":300},"_meta":{"progressToken":"c"}}}`)
			// The claim's first progress notification (after 5 s) says it waits for work; no
			// other line may answer it first.
			for l := p.next(); !strings.Contains(l, `"method":"notifications/progress"`); l = p.next() {
				require.NotContains(t, l, `"id":2`, "the claim answered instead of waiting")
			}
			require.NoError(t, p.cmd.Process.Signal(sig))
			// At once means long before the claim's 300 s wait ends; the bound leaves a loaded
			// machine its margin (how fast is not the point).
			require.Equal(t, 0, p.waitWithin(time.Minute), "the signal ends the server, not the claim's 300 s wait")
			require.Contains(t, p.stderrText(), "mcp-scheduler stopped")
		})
	}
}

// TestB24_StdinBOMCRLFBlankAndBannerLines: a BOM before the first message, CRLF endings, blank
// and whitespace-only lines and a non-JSON banner line on stdin: both requests are answered,
// the blank lines get nothing, the banner gets the JSON-RPC parse error (-32700, id null) so
// no client waits for it, it is logged, and the server goes on.
func TestB24_StdinBOMCRLFBlankAndBannerLines(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.start(nil, "serve")
	p.sendRaw("\xef\xbb\xbf" + initialize + "\r\n")
	p.sendRaw(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\r\n")
	p.sendRaw("\r\n   \r\n\n")
	p.sendRaw("this is a launcher's banner, not JSON\r\n")
	p.sendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\r\n")
	// The two requests are pipelined: JSON-RPC lets the replies come in any order, so they are
	// matched by id.
	ids := map[string]bool{}
	parseErrors := 0
	for range 3 {
		m := parseRPC(t, p.next())
		if string(m.ID) == "null" {
			require.NotNil(t, m.Error)
			require.Equal(t, -32700, m.Error.Code)
			parseErrors++
			continue
		}
		require.Nil(t, m.Error)
		ids[string(m.ID)] = true
	}
	require.Equal(t, map[string]bool{"1": true, "2": true}, ids)
	require.Equal(t, 1, parseErrors, "the banner, and only the banner, is answered with -32700")
	require.NoError(t, p.stdin.Close())
	require.Equal(t, 0, p.wait())
	for l := range p.lines { // all of stdout, to its end
		t.Fatalf("unexpected output after the three responses: %q", l)
	}
	require.Contains(t, p.stderrText(), "refused a message on stdin")
	require.Contains(t, p.stderrText(), "launcher's banner")
}

// TestB23_StdinMegabyteMessage: a 1 MiB tools/call on stdin is read and answered (a caller
// error here: the brief is over its limit), and the session goes on.
func TestB23_StdinMegabyteMessage(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.start(nil, "serve")
	p.send(initialize)
	require.Nil(t, parseRPC(t, p.next()).Error)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	big := strings.Repeat("x", 1<<20)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"big","brief":"` + big + `"}}}`)
	m := parseRPC(t, p.next())
	require.Equal(t, "2", string(m.ID))
	require.Contains(t, string(m.Result), "brief", "answered with a caller error naming the field")
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	require.Equal(t, "3", string(parseRPC(t, p.next()).ID), "the session goes on")
}

// TestB05_StdoutStaysJSONRPCWhileAChildAgentRuns: with a managed agent profile (the bundled
// reference agent, which prints NDJSON and floods its stderr) the server launches a child for
// a mission; the child's output goes to its attempt files, never to our stdout.
func TestB05_StdoutStaysJSONRPCWhileAChildAgentRuns(t *testing.T) {
	s := newSandbox(t)
	cfgDir := filepath.Join(s.home, "config", "mcp-scheduler")
	require.NoError(t, os.MkdirAll(cfgDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(`
[scheduler]
tick = "100ms"
[[profiles]]
name = "ref"
runtime = "ndjson"
command = ["{mcp_scheduler}", "reference-agent"]
env = ["PATH"]
`), 0o600))
	p := s.start(nil, "serve", "--log-level", "debug")
	p.send(initialize)
	require.Nil(t, parseRPC(t, p.next()).Error)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	brief := `@log info hello from the child\n@stderr 100KiB\n@raw \"not json on the child's stdout\"\n@write child.txt done\n@commit child\n@done`
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"child","write_area":["child.txt"],"brief":"` + brief + `"}}}`)
	m := parseRPC(t, p.next())
	require.Nil(t, m.Error)
	var created struct {
		StructuredContent struct{ Mission struct{ ID string } } `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &created))
	id := created.StructuredContent.Mission.ID
	require.NotEmpty(t, id)
	next := 3
	var last string
	testenv.WaitForState(t, "the child agent to run and its work to land", func() bool {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_mission","arguments":{"mission_id":%q}}}`, next, id))
		next++
		last = string(parseRPC(t, p.next()).Result)
		return strings.Contains(last, `\"landing\":\"landed\"`) || strings.Contains(last, `"landing":"landed"`)
	}, func() string { return last })
	// the CLI shows the landing next to the running server (same database)
	out, _, code := s.cli("missions", "show", id)
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^1\s+landed\s+main\s+[0-9a-f]{12}\s`, out, "the landing record, with the default target named")
	require.Regexp(t, `(?m)^1\s+/\S+\s+mcp-scheduler/`+id+`/a1\s+[0-9a-f]{12}\s+(active|removed)`, out,
		"the workspace record of the attempt")
	// the configured profile is among the agents the scheduler knows (it was missing: only
	// pull-mode agents were ever recorded)
	p.send(`{"jsonrpc":"2.0","id":1000,"method":"tools/call","params":{"name":"list_agents","arguments":{}}}`)
	var agents struct {
		StructuredContent struct {
			Agents []struct{ ID, Kind, Profile string }
		} `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(parseRPC(t, p.next()).Result, &agents))
	require.Len(t, agents.StructuredContent.Agents, 1)
	require.Equal(t, "ref", agents.StructuredContent.Agents[0].ID)
	require.Equal(t, "managed", agents.StructuredContent.Agents[0].Kind)
	require.NoError(t, p.stdin.Close())
	require.Equal(t, 0, p.wait())
	for l := range p.lines {
		parseRPC(t, l) // every line on stdout is JSON-RPC
	}
	require.NotContains(t, p.stderrText(), "hello from the child", "the child's output is in its attempt files")
}
