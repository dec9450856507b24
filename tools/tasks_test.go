package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// taskWire is one client session that speaks raw JSON-RPC to the server (Streamable HTTP or
// stdio), so the task methods are driven exactly as the spec writes them.
type taskWire interface {
	// rpc sends a request and returns its result, or its JSON-RPC error (code, message).
	rpc(method, params string) (json.RawMessage, *rpcErrorBody)
}

const initTasks = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"list":{},"cancel":{}}},"clientInfo":{"name":"tasks-test","version":"0"}}}`

// httpWire is a Streamable HTTP session of protocol 2025-11-25.
type httpWire struct {
	t    *testing.T
	base string
	h    map[string]string
	next int
	init json.RawMessage // the initialize result
}

func newHTTPWire(t *testing.T, base string) *httpWire {
	t.Helper()
	res := post(t, base+PathMCP, initTasks, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	w := &httpWire{t: t, base: base, next: 100,
		h: map[string]string{"Mcp-Session-Id": res.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-11-25"}}
	w.init = readReply(t, res, "1").Result
	require.Equal(t, http.StatusAccepted, post(t, base+PathMCP, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, w.h).StatusCode)
	return w
}

type wireReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *rpcErrorBody   `json:"error"`
}

// readReply reads the response for id from a JSON body or an SSE stream.
func readReply(t *testing.T, res *http.Response, id string) wireReply {
	t.Helper()
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		for ev := range readSSE(res.Body) {
			var r wireReply
			if ev.data != "" && json.Unmarshal([]byte(ev.data), &r) == nil && string(r.ID) == id {
				return r
			}
		}
		t.Fatalf("the stream ended without the response to %s", id)
	}
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var r wireReply
	require.NoError(t, json.Unmarshal(body, &r), string(body))
	require.Equal(t, id, string(r.ID), string(body))
	return r
}

func (w *httpWire) rpc(method, params string) (json.RawMessage, *rpcErrorBody) {
	w.t.Helper()
	w.next++
	id := fmt.Sprint(w.next)
	res := post(w.t, w.base+PathMCP, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params), w.h)
	r := readReply(w.t, res, id)
	return r.Result, r.Error
}

// stdioWire is a stdio session of protocol 2025-11-25.
type stdioWire struct {
	c    *rawStdio
	next int
	init json.RawMessage
}

func newStdioWire(t *testing.T, b *bundle) *stdioWire {
	t.Helper()
	w := &stdioWire{c: newRawStdio(t, b.ctx, b.srv), next: 100}
	w.c.send(initTasks)
	w.init = w.await("1").Result
	w.c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return w
}

func (w *stdioWire) await(id string) wireReply {
	for {
		line := w.c.next()
		var r wireReply
		require.NoError(w.c.t, json.Unmarshal([]byte(line), &r), line)
		if string(r.ID) == id {
			return r
		}
	}
}

func (w *stdioWire) rpc(method, params string) (json.RawMessage, *rpcErrorBody) {
	w.next++
	id := fmt.Sprint(w.next)
	w.c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
	r := w.await(id)
	return r.Result, r.Error
}

type wireTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  *int64 `json:"pollInterval"`
}

// taskOp calls tasks/get or tasks/cancel for id and returns the task it answers.
func taskOp(t *testing.T, w taskWire, method, id string) wireTask {
	t.Helper()
	raw, e := w.rpc(method, `{"taskId":"`+id+`"}`)
	require.Nil(t, e, "%s %s", method, id)
	var v wireTask
	require.NoError(t, json.Unmarshal(raw, &v), string(raw))
	return v
}

func createTask(t *testing.T, w taskWire, tool, args, task string) wireTask {
	t.Helper()
	raw, e := w.rpc("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s,"task":%s}`, tool, args, task))
	require.Nil(t, e)
	var v struct {
		Task wireTask `json:"task"`
	}
	require.NoError(t, json.Unmarshal(raw, &v), string(raw))
	require.Equal(t, "working", v.Task.Status, "a task starts working: %s", raw)
	require.True(t, strings.HasPrefix(v.Task.TaskID, "task-"), string(raw))
	return v.Task
}

func wantCode(t *testing.T, e *rpcErrorBody, code int, contains string) {
	t.Helper()
	require.NotNil(t, e, "an error %d", code)
	require.Equal(t, code, e.Code, e.Message)
	require.Contains(t, e.Message, contains)
}

// exerciseTasks runs the task rules on one session w (docs/mcp.md, "Tasks").
func exerciseTasks(t *testing.T, b *bundle, w taskWire, init json.RawMessage) {
	var in struct {
		Capabilities struct {
			Tasks map[string]any `json:"tasks"`
		} `json:"capabilities"`
	}
	require.NoError(t, json.Unmarshal(init, &in))
	require.Contains(t, in.Capabilities.Tasks, "list", string(init))
	require.Contains(t, in.Capabilities.Tasks, "cancel", string(init))
	require.Equal(t, map[string]any{"tools": map[string]any{"call": map[string]any{}}}, in.Capabilities.Tasks["requests"], string(init))

	raw, e := w.rpc("tools/list", `{}`)
	require.Nil(t, e)
	var tl struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(raw, &tl))
	for _, tool := range tl.Tools {
		if tool.Name == "dispatch" || tool.Name == "claim_mission" {
			require.NotNil(t, tool.Execution, tool.Name)
			require.Equal(t, "optional", tool.Execution.TaskSupport, tool.Name)
		} else {
			require.Nil(t, tool.Execution, "%s is not a task tool", tool.Name)
		}
	}

	// A waiting dispatch as a task: working, with ttl and poll interval; listed; cancelled
	// by tasks/cancel (status cancelled in the answer itself); the voyage stays.
	long := createTask(t, w, "dispatch", `{"title":"as a task","wait_seconds":300,"missions":[{"key":"a","title":"never runs here"}]}`, `{"ttl":120000}`)
	require.Equal(t, int64(120000), *long.TTL)
	require.Equal(t, int64(5000), *long.PollInterval)
	got := taskOp(t, w, "tasks/get", long.TaskID)
	require.Equal(t, "working", got.Status)
	require.Equal(t, long.CreatedAt, got.CreatedAt)
	require.NotEmpty(t, got.LastUpdatedAt)
	raw, e = w.rpc("tasks/list", `{}`)
	require.Nil(t, e)
	require.Contains(t, string(raw), long.TaskID)
	// The status message follows the call's progress: once it names the voyage, the
	// voyage is stored (a cancel before that would store nothing: dispatch is atomic).
	testenv.WaitFor(t, "the dispatch task to report its voyage", func() bool {
		return strings.HasPrefix(taskOp(t, w, "tasks/get", long.TaskID).StatusMessage, "voyage ")
	})
	c := taskOp(t, w, "tasks/cancel", long.TaskID)
	require.Equal(t, "cancelled", c.Status)
	require.Equal(t, "cancelled", taskOp(t, w, "tasks/get", long.TaskID).Status)
	_, e = w.rpc("tasks/cancel", `{"taskId":"`+long.TaskID+`"}`)
	wantCode(t, e, -32602, "already in terminal status 'cancelled'")
	_, e = w.rpc("tasks/result", `{"taskId":"`+long.TaskID+`"}`)
	wantCode(t, e, -32800, "cancelled")
	vs, err := b.eng.Voyages(b.ctx, nil, 100)
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(vs, func(v domain.Voyage) bool {
		return v.Title == "as a task"
	}), "cancelling the task leaves the voyage: %+v", vs)

	// A short wait: tasks/result blocks until it ends and answers the tool's own result
	// with the related-task _meta; the task is then completed.
	short := createTask(t, w, "dispatch", `{"title":"short","wait_seconds":1,"missions":[{"key":"a","title":"waits"}]}`, `{}`)
	raw, e = w.rpc("tasks/result", `{"taskId":"`+short.TaskID+`"}`)
	require.Nil(t, e)
	var res struct {
		Structured DispatchResult `json:"structuredContent"`
		IsError    bool           `json:"isError"`
		Meta       map[string]any `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(raw, &res), string(raw))
	require.False(t, res.IsError)
	require.Equal(t, "short", res.Structured.Voyage.Title)
	require.Equal(t, map[string]any{"taskId": short.TaskID}, res.Meta["io.modelcontextprotocol/related-task"])
	require.Equal(t, "completed", taskOp(t, w, "tasks/get", short.TaskID).Status)
	_, e = w.rpc("tasks/cancel", `{"taskId":"`+short.TaskID+`"}`)
	wantCode(t, e, -32602, "already in terminal status 'completed'")

	// claim_mission as a task takes a mission; a bad argument makes the task failed, and
	// tasks/result answers the tool's isError result.
	b.createMission(map[string]any{"title": "claimed by a task"})
	cl := createTask(t, w, "claim_mission", `{"agent_id":"task-agent","wait_seconds":30}`, `{}`)
	require.Equal(t, int64(2000), *cl.PollInterval)
	raw, e = w.rpc("tasks/result", `{"taskId":"`+cl.TaskID+`"}`)
	require.Nil(t, e)
	var claimed struct {
		Structured ClaimResult `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(raw, &claimed), string(raw))
	require.True(t, claimed.Structured.Claimed, string(raw))
	require.NotNil(t, claimed.Structured.Mission, string(raw))
	require.Positive(t, claimed.Structured.Epoch, string(raw))
	bad := createTask(t, w, "claim_mission", `{"agent_id":"no spaces allowed","wait_seconds":30}`, `{}`)
	raw, e = w.rpc("tasks/result", `{"taskId":"`+bad.TaskID+`"}`)
	require.Nil(t, e)
	require.NoError(t, json.Unmarshal(raw, &res), string(raw))
	require.True(t, res.IsError, string(raw))
	f := taskOp(t, w, "tasks/get", bad.TaskID)
	require.Equal(t, "failed", f.Status)
	require.Contains(t, f.StatusMessage, "agent_id")

	// The spec's errors.
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		_, e = w.rpc(m, `{"taskId":"task-00000000000000000000000000000000"}`)
		wantCode(t, e, -32602, "Task not found")
		_, e = w.rpc(m, `{}`)
		wantCode(t, e, -32602, "params.taskId: required")
	}
	_, e = w.rpc("tasks/list", `{"cursor":"not-ours"}`)
	wantCode(t, e, -32602, "params.cursor")
	_, e = w.rpc("tools/call", `{"name":"status","arguments":{},"task":{}}`)
	wantCode(t, e, -32601, "cannot be called as a task")
	_, e = w.rpc("tools/call", `{"name":"dispatch","arguments":{},"task":{"ttl":-1}}`)
	wantCode(t, e, -32602, "task.ttl")
}

// TestTasks_StreamableHTTP: the task rules over Streamable HTTP (raw JSON-RPC; mcp-go's own
// client cannot read a CreateTaskResult), tasks bound to their session, and a session's
// DELETE cancelling its tasks with their goroutines settling.
func TestTasks_StreamableHTTP(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{KeepAlive: 200 * time.Millisecond})
	w := newHTTPWire(t, base)
	exerciseTasks(t, b, w, w.init)

	http.DefaultClient.CloseIdleConnections()
	before := runtime.NumGoroutine()
	other := newHTTPWire(t, base)
	held := createTask(t, other, "claim_mission", `{"agent_id":"waiter","wait_seconds":300}`, `{}`)
	_, e := w.rpc("tasks/get", `{"taskId":"`+held.TaskID+`"}`)
	wantCode(t, e, -32602, "Task not found") // another session's task is not told apart from none
	raw, e := w.rpc("tasks/list", `{}`)
	require.Nil(t, e)
	require.NotContains(t, string(raw), held.TaskID)

	// tasks/result waits across keepalives (the POST stream turns to SSE) until DELETE.
	res := postCtx(t, context.Background(), base+PathMCP, `{"jsonrpc":"2.0","id":77,"method":"tasks/result","params":{"taskId":"`+held.TaskID+`"}}`, other.h)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"), "a keepalive turned the waiting tasks/result to SSE")
	var keepalives atomic.Int32
	resultc := make(chan wireReply, 1)
	go func() {
		defer close(resultc)
		for ev := range readSSE(res.Body) {
			var r wireReply
			switch {
			case ev.comment:
				keepalives.Add(1)
			case json.Unmarshal([]byte(ev.data), &r) == nil && string(r.ID) == "77":
				resultc <- r
				return
			}
		}
	}()
	testenv.WaitFor(t, "two keepalives on the waiting tasks/result", func() bool { return keepalives.Load() >= 2 })
	require.Equal(t, http.StatusOK, send(t, http.MethodDelete, base+PathMCP, "", other.h).StatusCode)
	select {
	case r, ok := <-resultc:
		require.True(t, ok, "the tasks/result stream ended without the response to 77")
		require.NotNil(t, r.Error, "tasks/result of a task its session's end cancelled")
	case <-time.After(time.Minute): // a bound on what must be cut short: the claim waits 300 s
		t.Fatal("tasks/result outlived its session")
	}
	b.srv.tasks.mu.Lock()
	for _, rec := range b.srv.tasks.byID {
		require.NotEqual(t, held.TaskID, rec.id, "the ended session's tasks are forgotten")
	}
	b.srv.tasks.mu.Unlock()
	testenv.WaitFor(t, "the cancelled claim's goroutines to end", func() bool {
		http.DefaultClient.CloseIdleConnections()
		return runtime.NumGoroutine() <= before
	})

	// A 2025-06-18 session is not offered tasks: no capability, and a call with params.task
	// runs as a normal call.
	legacy := initSession(t, base)
	res = post(t, base+PathMCP, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"status","arguments":{},"task":{}}}`, legacy)
	r := readReply(t, res, "9")
	require.Nil(t, r.Error)
	require.Contains(t, string(r.Result), "structuredContent", "a normal CallToolResult")
}

// TestTasks_Stdio: the task rules over stdio, and the end of the stdio stream cancelling
// the session's tasks.
func TestTasks_Stdio(t *testing.T) {
	b := setup(t, setupOpts{})
	w := newStdioWire(t, b)
	exerciseTasks(t, b, w, w.init)
	createTask(t, w, "claim_mission", `{"agent_id":"waiter","wait_seconds":300}`, `{}`)
}

// TestTasks_ShutdownCancels: server shutdown cancels a task's wait at once (not after its
// 300 s), and ServeHTTP returns only after the task call's goroutine has ended.
func TestTasks_ShutdownCancels(t *testing.T) {
	b := setup(t, setupOpts{})
	base, stop := httpServer(t, b, HTTPOptions{})
	w := newHTTPWire(t, base)
	held := createTask(t, w, "claim_mission", `{"agent_id":"waiter","wait_seconds":300}`, `{}`)
	rec, p := b.srv.tasks.get(w.h["Mcp-Session-Id"], held.TaskID)
	require.Nil(t, p)
	require.NoError(t, stop()) // ServeHTTP returns only once the task calls it ran have ended
	require.True(t, rec.terminal(), "a task's call outlived the server")
	v := rec.view()
	require.Equal(t, "cancelled", string(v.Status))
	require.Contains(t, v.StatusMessage, "shut", "cancelled by the shutdown (the server's, or its sessions' end)")
}

// TestTaskTable_Bounds: a session keeps at most taskMaxPerOwner records: one more is refused
// while all are working, and forgets the oldest terminal one otherwise; a terminal task whose
// ttl has passed is forgotten and its id then gets "Task has expired"; another session's
// count is its own.
func TestTaskTable_Bounds(t *testing.T) {
	tt := newTaskTable(slog.New(slog.DiscardHandler))
	ctx := context.Background()
	var recs []*taskRec
	for range taskMaxPerOwner {
		r, _, err := tt.add(ctx, "s1", "claim_mission", time.Hour)
		require.NoError(t, err)
		recs = append(recs, r)
	}
	_, _, err := tt.add(ctx, "s1", "claim_mission", time.Hour)
	require.ErrorIs(t, err, errTooManyTasks)
	_, _, err = tt.add(ctx, "s2", "claim_mission", time.Hour)
	require.NoError(t, err, "another session has its own bound")

	require.True(t, recs[5].finish(mcp.TaskStatusCompleted, "done", &mcp.CallToolResult{}, nil))
	require.True(t, recs[9].finish(mcp.TaskStatusCompleted, "done", &mcp.CallToolResult{}, nil))
	_, _, err = tt.add(ctx, "s1", "claim_mission", time.Hour)
	require.NoError(t, err)
	_, p := tt.get("s1", recs[5].id)
	require.NotNil(t, p, "the oldest terminal record made room")
	_, p = tt.get("s1", recs[9].id)
	require.Nil(t, p, "only one record was forgotten")
	_, p = tt.get("s1", recs[0].id)
	require.Nil(t, p, "working records are kept")

	short, _, err := tt.add(ctx, "s2", "dispatch", time.Millisecond)
	require.NoError(t, err)
	time.Sleep(5 * time.Millisecond) // wall time passes the 1 ms ttl: no clock to advance
	_, p = tt.get("s2", short.id)
	require.Nil(t, p, "a working task outlives its ttl")
	require.True(t, short.finish(mcp.TaskStatusFailed, "x", &mcp.CallToolResult{IsError: true}, nil))
	_, p = tt.get("s2", short.id)
	require.NotNil(t, p)
	require.Contains(t, p.Message, "Task has expired")

	tt.endOwner("s1", "test")
	for _, r := range recs {
		require.True(t, r.terminal(), "the end of the session ends its tasks")
	}
	require.Equal(t, mcp.TaskStatusCancelled, recs[0].view().Status)
	require.Equal(t, mcp.TaskStatusCompleted, recs[9].view().Status, "a terminal task stays as it ended")
}

// TestTasks_NotOffered: where the server does not answer the task methods itself, the tasks
// capability is not declared and a tools/call with params.task runs as a normal call: legacy
// /sse (even on 2025-11-25) and the stateless 2026-07-28 revision (server/discover), driven
// by raw SSE and by mcp-go's own client.
func TestTasks_NotOffered(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{KeepAlive: time.Hour})
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()

	events, msgURL, _ := openSSE(t, ctx, base, "")
	require.Equal(t, http.StatusAccepted, post(t, msgURL, initTasks, nil).StatusCode)
	init := (<-events).data
	require.Contains(t, init, `"protocolVersion":"2025-11-25"`)
	require.NotContains(t, init, `"tasks"`, "no tasks capability on /sse: %s", init)
	require.Equal(t, http.StatusAccepted, post(t, msgURL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil).StatusCode)
	require.Equal(t, http.StatusAccepted, post(t, msgURL, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"dispatch","arguments":{"title":"sse","missions":[{"key":"a","title":"x"}]},"task":{}}}`, nil).StatusCode)
	var r wireReply
	require.NoError(t, json.Unmarshal([]byte((<-events).data), &r))
	require.Nil(t, r.Error)
	require.Contains(t, string(r.Result), `"structuredContent"`, "a normal CallToolResult: %s", r.Result)
	require.NotContains(t, string(r.Result), `"taskId"`)

	c := streamableClient(t, base+PathMCP, nil)
	initClient(t, b.ctx, c, "")
	require.Equal(t, mcp.ProtocolVersion20260728, c.ProtocolVersion())
	require.Nil(t, c.GetServerCapabilities().Tasks, "server/discover declares no tasks")
	var req mcp.CallToolRequest
	req.Params.Name = "dispatch"
	req.Params.Arguments = map[string]any{"title": "stateless", "missions": []any{map[string]any{"key": "a", "title": "x"}}}
	req.Params.Task = &mcp.TaskParams{}
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	require.Contains(t, text(res), `"stateless"`, "the call ran as a normal call")
}

// TestTasks_RevokedTokenCancelsItsTasks: a task-augmented claim_mission waiting for work,
// started with a named token, is cancelled when that token is revoked (its line removed from
// the token file): its session ends, and with it the task, so the revoked agent cannot be
// handed a mission by a task it left running. Another token's task goes on.
func TestTasks_RevokedTokenCancelsItsTasks(t *testing.T) {
	b := setup(t, setupOpts{})
	path := filepath.Join(t.TempDir(), "tokens")
	writeTokens(t, path, "alice "+tokA+"\nbob "+tokB+"\n", 0o600)
	ts, err := OpenTokenFile(path, nil)
	require.NoError(t, err)
	base, _ := httpServer(t, b, HTTPOptions{Tokens: ts})
	wire := func(token string) *httpWire {
		res := post(t, base+PathMCP, initTasks, map[string]string{"Authorization": "Bearer " + token})
		require.Equal(t, http.StatusOK, res.StatusCode)
		w := &httpWire{t: t, base: base, next: 100, h: map[string]string{"Authorization": "Bearer " + token,
			"Mcp-Session-Id": res.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-11-25"}}
		require.Equal(t, http.StatusAccepted, post(t, base+PathMCP, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, w.h).StatusCode)
		return w
	}
	bob, alice := wire(tokB), wire(tokA)
	bobs := createTask(t, bob, "claim_mission", `{"agent_id":"bob-1","wait_seconds":300}`, `{}`)
	alices := createTask(t, alice, "claim_mission", `{"agent_id":"alice-1","wait_seconds":300}`, `{}`)
	bobRec, p := b.srv.tasks.get(bob.h["Mcp-Session-Id"], bobs.TaskID)
	require.Nil(t, p)
	aliceRec, p := b.srv.tasks.get(alice.h["Mcp-Session-Id"], alices.TaskID)
	require.Nil(t, p)

	writeTokens(t, path, "alice "+tokA+"\n", 0o600)
	testenv.WaitFor(t, "bob's task to be cancelled with his token", func() bool { return bobRec.terminal() })
	v := bobRec.view()
	require.Equal(t, "cancelled", string(v.Status), v.StatusMessage)
	require.Contains(t, v.StatusMessage, "revoked")
	require.False(t, aliceRec.terminal(), "alice's task still waits for work")
}
