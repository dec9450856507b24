package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// servingAddr finds the address serve --http logs once it listens.
var servingAddr = regexp.MustCompile(`serving MCP over HTTP .*?addr=(\S+)`)

// startHTTP runs `serve --http 127.0.0.1:0` with extra environment entries and returns it
// with its /mcp URL.
func (e *xenv) startHTTP(name string, extraEnv ...string) (*xproc, string) {
	e.t.Helper()
	saved := e.env
	e.env = append(append([]string{}, saved...), extraEnv...)
	p := e.start(name, "serve", "--http", "127.0.0.1:0")
	e.env = saved
	var addr string
	e.waitUntil(name+" listens", func() bool {
		if m := servingAddr.FindStringSubmatch(p.logText()); m != nil {
			addr = m[1]
			return true
		}
		require.False(e.t, p.exited(), "%s exited: %s", name, p.logText())
		return false
	})
	return p, "http://" + addr + "/mcp"
}

// sdkClient is one run of testdata/pull-client.cjs: the official TypeScript SDK client over
// Streamable HTTP, one command per line.
type sdkClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     *os.File
	out    *bufio.Reader
	mu     sync.Mutex
	stderr bytes.Buffer
	Ready  struct {
		Ready        bool   `json:"ready"`
		ConnectError string `json:"connectError"`
	}
}

// toolAnswer is what the client saw of one tool call.
type toolAnswer struct {
	IsError       bool            `json:"isError"`
	Structured    json.RawMessage `json:"structured"`
	Text          string          `json:"text"`
	ProtocolError string          `json:"protocolError"`
}

func startSDKClient(t *testing.T, url, token string) *sdkClient {
	t.Helper()
	nodeModules := testenv.NodeModules(t, "@modelcontextprotocol/sdk")
	node := testenv.LookPath(t, "node")
	script, err := filepath.Abs("testdata/pull-client.cjs")
	require.NoError(t, err)
	c := &sdkClient{t: t, cmd: exec.Command(node, script)}
	c.cmd.Env = append(os.Environ(), "NODE_PATH="+nodeModules, "MCP_URL="+url, "MCP_TOKEN="+token)
	w, err := c.cmd.StdinPipe()
	require.NoError(t, err)
	c.in = w.(*os.File)
	r, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	c.out = bufio.NewReader(r)
	c.cmd.Stderr = &lockedBuffer{mu: &c.mu, b: &c.stderr}
	require.NoError(t, c.cmd.Start())
	t.Cleanup(func() {
		_ = c.in.Close()
		done := make(chan struct{})
		go func() { _ = c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second): // a grace before the kill, not a wait the test needs
			_ = c.cmd.Process.Kill()
			<-done
		}
	})
	c.read(&c.Ready)
	return c
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (c *sdkClient) read(v any) {
	c.t.Helper()
	type line struct {
		s   string
		err error
	}
	ch := make(chan line, 1)
	go func() {
		s, err := c.out.ReadString('\n')
		ch <- line{s, err}
	}()
	stderr := func() string {
		c.mu.Lock()
		defer c.mu.Unlock()
		return "sdk client: " + c.stderr.String()
	}
	l, _ := testenv.ReceiveState(c.t, "the SDK client's answer", ch, stderr)
	require.NoError(c.t, l.err, stderr())
	require.NoError(c.t, json.Unmarshal([]byte(l.s), v), l.s)
}

func (c *sdkClient) send(cmd map[string]any) {
	c.t.Helper()
	b, err := json.Marshal(cmd)
	require.NoError(c.t, err)
	_, err = c.in.Write(append(b, '\n'))
	require.NoError(c.t, err)
}

// call calls a tool and returns what the client saw.
func (c *sdkClient) call(name string, args map[string]any) toolAnswer {
	c.t.Helper()
	c.send(map[string]any{"op": "call", "name": name, "args": args})
	var a toolAnswer
	c.read(&a)
	require.Empty(c.t, a.ProtocolError, "%s: protocol error", name)
	return a
}

// ok calls a tool that must succeed and decodes its structured result into v.
func (c *sdkClient) ok(name string, args map[string]any, v any) {
	c.t.Helper()
	a := c.call(name, args)
	require.False(c.t, a.IsError, "%s: %s", name, a.Text)
	if v != nil {
		require.NoError(c.t, json.Unmarshal(a.Structured, v), a.Text)
	}
}

// write edits a file in a workspace, as the agent's own tools would.
func (c *sdkClient) write(dir, file, content string) {
	c.t.Helper()
	c.send(map[string]any{"op": "write", "dir": dir, "file": file, "content": content})
	var r struct{ OK bool }
	c.read(&r)
	require.True(c.t, r.OK)
}

// claimed is the part of claim_mission's answer the tests read.
type claimed struct {
	Claimed          bool   `json:"claimed"`
	Reason           string `json:"reason"`
	Epoch            int64  `json:"epoch"`
	Attempt          int    `json:"attempt"`
	HeartbeatSeconds int    `json:"heartbeat_seconds"`
	Mission          struct {
		ID    string `json:"id"`
		Key   string `json:"key"`
		Title string `json:"title"`
	} `json:"mission"`
	Workspace struct {
		Path   string `json:"path"`
		Branch string `json:"branch"`
	} `json:"workspace"`
}

// TestPull_TypeScriptSDKOverHTTP (issue 7, e2e 3): an external agent — the official MCP
// TypeScript SDK client — claims missions from `serve --http` over Streamable HTTP with a
// bearer token (a wrong token is refused): a claim that waits for work wakes when a second
// client dispatches a voyage; the agent heartbeats through more than a lease TTL, edits its
// workspace and completes each mission in turn (the dependent one once its dependency
// landed); the work lands once.
// Then a client that stopped heartbeating loses its lease: the mission goes to a second
// client, and the old epoch — presented by either client — is refused with "lease lost"; the
// first client's work never lands.
func TestPull_TypeScriptSDKOverHTTP(t *testing.T) {
	const token = "pull-token-4711"
	e := newXEnv(t, xsettings{LeaseTTL: 4 * time.Second, Renew: time.Second, LeaderLease: 2 * time.Second, RetryBudget: 2})
	srv, url := e.startHTTP("serve-http", "MCP_SCHEDULER_TOKEN="+token)

	bad := startSDKClient(t, url, "wrong-token")
	require.NotEmpty(t, bad.Ready.ConnectError, "a wrong bearer token is refused")
	require.Contains(t, bad.Ready.ConnectError, "unauthorized")

	a := startSDKClient(t, url, token)
	require.True(t, a.Ready.Ready, a.Ready.ConnectError)
	b := startSDKClient(t, url, token)
	require.True(t, b.Ready.Ready, b.Ready.ConnectError)

	// The agent asks for work before there is any; the Main Agent (a second SDK client)
	// dispatches a voyage, and the waiting claim wakes with its first mission.
	a.send(map[string]any{"op": "call", "name": "claim_mission", "args": map[string]any{"agent_id": "sdk-worker", "wait_seconds": 30}})
	testenv.WaitFor(t, "the claim to reach the server (it records its agent, then waits)", func() bool {
		agents, err := e.engine().Agents(e.ctx)
		require.NoError(t, err)
		return slices.ContainsFunc(agents, func(a domain.Agent) bool { return a.ID == "sdk-worker" })
	})
	var disp struct {
		IDs map[string]string `json:"ids"`
	}
	b.ok("dispatch", map[string]any{"title": "pull voyage", "missions": []map[string]any{
		{"key": "p1", "title": "first", "brief": "write pull/p1.txt", "write_area": []string{"pull/p1.txt"}},
		{"key": "p2", "title": "second, after the first", "brief": "write pull/p2.txt", "write_area": []string{"pull/p2.txt"}, "depends_on": []string{"p1"}},
		{"key": "p3", "title": "third", "brief": "write pull/p3.txt", "write_area": []string{"pull/p3.txt"}},
	}}, &disp)
	require.Len(t, disp.IDs, 3)
	keyOf := map[string]string{}
	for k, id := range disp.IDs {
		keyOf[id] = k
	}

	// The agent works through the voyage, heartbeating through more than a lease TTL each
	// time; p2 becomes runnable only once p1 landed.
	var answer toolAnswer
	a.read(&answer)
	require.False(t, answer.IsError, answer.Text)
	for i := range 3 {
		if i > 0 {
			answer = a.call("claim_mission", map[string]any{"agent_id": "sdk-worker", "wait_seconds": 30})
			require.False(t, answer.IsError, answer.Text)
		}
		var c claimed
		require.NoError(t, json.Unmarshal(answer.Structured, &c), answer.Text)
		require.True(t, c.Claimed, c.Reason)
		require.Equal(t, 1, c.HeartbeatSeconds, "a third of the 4 s lease, rounded down")
		require.Equal(t, fmt.Sprintf("mcp-scheduler/%s/a1", c.Mission.ID), c.Workspace.Branch)
		require.DirExists(t, c.Workspace.Path)
		key := keyOf[c.Mission.ID]
		require.NotEmpty(t, key)
		f := map[string]any{"mission_id": c.Mission.ID, "epoch": c.Epoch}
		for range 5 { // 5 s of work: longer than the lease, kept alive by heartbeats
			var hb struct {
				State string `json:"state"`
			}
			a.ok("heartbeat", f, &hb)
			require.Equal(t, "running", hb.State)
			time.Sleep(time.Second) // wall time: the work outlasts the lease
		}
		a.write(c.Workspace.Path, "pull/"+key+".txt", "written by the SDK agent for "+key+"\n")
		a.ok("complete_mission", map[string]any{"mission_id": c.Mission.ID, "epoch": c.Epoch, "summary": "wrote pull/" + key + ".txt"}, nil)
	}
	e.waitUntil("the voyage lands", func() bool {
		return e.voyage(e.mission(disp.IDs["p1"]).Mission.VoyageID).Voyage.State == domain.VoyageCompleted
	})
	var none claimed
	a.ok("claim_mission", map[string]any{"agent_id": "sdk-worker", "wait_seconds": 1}, &none)
	require.False(t, none.Claimed)
	for key, id := range disp.IDs {
		body, ok := e.file("pull/" + key + ".txt")
		require.True(t, ok, key)
		require.Equal(t, "written by the SDK agent for "+key+"\n", body)
		require.Equal(t, 1, strings.Count(e.git("log", "--format=%H", "main", "--", "pull/"+key+".txt"), "\n")+1, "%s changed main once", key)
		d := e.mission(id)
		require.Equal(t, 1, d.Mission.Attempt)
		require.Len(t, d.Landings, 1)
	}

	// A lease that expires: the first client claims, edits, then stops heartbeating.
	var created struct {
		Mission struct {
			ID string `json:"id"`
		} `json:"mission"`
	}
	a.ok("create_mission", map[string]any{"title": "contested", "brief": "write stale/s.txt", "write_area": []string{"stale/**"}}, &created)
	id := created.Mission.ID
	var first claimed
	a.ok("claim_mission", map[string]any{"agent_id": "sdk-slow", "wait_seconds": 10}, &first)
	require.True(t, first.Claimed, first.Reason)
	require.Equal(t, id, first.Mission.ID)
	a.write(first.Workspace.Path, "stale/s.txt", "from the first claim\n")
	old := map[string]any{"mission_id": id, "epoch": first.Epoch}
	// one heartbeat, so the agent was heard from: its expiry is a crash, not an abandoned
	// claim (an attempt never heard from costs no budget; engine/abandon_test.go)
	a.ok("heartbeat", old, nil)
	e.waitUntil("the silent claim's lease expires and the mission is free again", func() bool {
		m := e.mission(id).Mission
		return m.State == domain.StatePending && m.Attempt == 1
	})

	stale := b.call("heartbeat", old)
	require.True(t, stale.IsError, "a second client presenting the old epoch is refused: %s", stale.Text)
	require.Contains(t, stale.Text, "lease lost")
	var second claimed
	b.ok("claim_mission", map[string]any{"agent_id": "sdk-second", "wait_seconds": 10}, &second)
	require.True(t, second.Claimed, second.Reason)
	require.Equal(t, id, second.Mission.ID)
	require.Equal(t, 2, second.Attempt)
	require.Greater(t, second.Epoch, first.Epoch)
	require.NotEqual(t, first.Workspace.Path, second.Workspace.Path)

	// The first client comes back with its old epoch: refused, and its result is not used.
	for _, tool := range []string{"heartbeat", "report_progress", "complete_mission"} {
		args := map[string]any{"mission_id": id, "epoch": first.Epoch}
		switch tool {
		case "report_progress":
			args["message"] = "still here"
		case "complete_mission":
			args["summary"] = "done (late)"
		}
		ans := a.call(tool, args)
		require.True(t, ans.IsError, "%s with the old epoch: %s", tool, ans.Text)
		require.Contains(t, ans.Text, "lease lost", tool)
	}
	b.write(second.Workspace.Path, "stale/s.txt", "from the second claim\n")
	b.ok("complete_mission", map[string]any{"mission_id": id, "epoch": second.Epoch, "summary": "wrote stale/s.txt"}, nil)
	e.waitUntil("the second claim lands", func() bool { return e.mission(id).Mission.Landing == domain.LandingLanded })
	body, _ := e.file("stale/s.txt")
	require.Equal(t, "from the second claim\n", body)
	require.NotContains(t, e.git("log", "-p", "main", "--", "stale/s.txt"), "from the first claim", "the expired claim's work never reached main")
	d := e.mission(id)
	require.Len(t, d.Landings, 1)
	require.Equal(t, 2, d.Landings[0].Attempt)
	require.Equal(t, domain.OutcomeFailed, d.Attempts[0].Outcome, "the first attempt ended with its expired lease")
	require.Contains(t, d.Attempts[0].Failure.Summary, "expired")

	a.send(map[string]any{"op": "close"})
	b.send(map[string]any{"op": "close"})
	require.NoError(t, srv.stop())
}

// TestPull_ClaimSurvivesServerRestart: leases live in the database, not in a server. An
// external agent claims through one `serve --http`; that server is killed with SIGKILL; the
// agent connects to another server of the same data dir and goes on with the same epoch —
// heartbeats and completion are accepted and the work lands once.
func TestPull_ClaimSurvivesServerRestart(t *testing.T) {
	const token = "pull-token-restart"
	e := newXEnv(t, xsettings{LeaseTTL: 10 * time.Second, LeaderLease: 2 * time.Second})
	first, url := e.startHTTP("serve-1", "MCP_SCHEDULER_TOKEN="+token)
	a := startSDKClient(t, url, token)
	require.True(t, a.Ready.Ready, a.Ready.ConnectError)
	var created struct {
		Mission struct {
			ID string `json:"id"`
		} `json:"mission"`
	}
	a.ok("create_mission", map[string]any{"title": "survives", "brief": "write r.txt", "write_area": []string{"r.txt"}}, &created)
	var c claimed
	a.ok("claim_mission", map[string]any{"agent_id": "sdk-steady", "wait_seconds": 10}, &c)
	require.True(t, c.Claimed, c.Reason)
	a.write(c.Workspace.Path, "r.txt", "through a restart\n")
	first.kill()

	_, url2 := e.startHTTP("serve-2", "MCP_SCHEDULER_TOKEN="+token)
	b := startSDKClient(t, url2, token)
	require.True(t, b.Ready.Ready, b.Ready.ConnectError)
	f := map[string]any{"mission_id": c.Mission.ID, "epoch": c.Epoch}
	var hb struct {
		State string `json:"state"`
	}
	b.ok("heartbeat", f, &hb)
	require.Equal(t, "running", hb.State)
	b.ok("complete_mission", map[string]any{"mission_id": c.Mission.ID, "epoch": c.Epoch, "summary": "wrote r.txt"}, nil)
	e.waitUntil("it lands", func() bool { return e.mission(c.Mission.ID).Mission.Landing == domain.LandingLanded })
	body, _ := e.file("r.txt")
	require.Equal(t, "through a restart\n", body)
	d := e.mission(c.Mission.ID)
	require.Equal(t, 1, d.Mission.Attempt)
	require.Len(t, d.Landings, 1)
	b.send(map[string]any{"op": "close"})
}
