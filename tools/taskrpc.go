package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The task methods as this server answers them (docs/mcp.md, "Tasks"). A transport hands a
// checked message of a session that was offered tasks to taskRequest; when it reports true,
// answerTask answers it instead of mcp-go:
//
//   - tools/call with params.task on dispatch or claim_mission: a working task is created
//     and its CreateTaskResult returned at once; the call runs on a context owned by the task
//     (ended by tasks/cancel, by the end of the session, by server shutdown), never by the
//     request that created it;
//   - tools/call with params.task on any other tool: -32601 (its taskSupport is forbidden);
//   - tasks/get, tasks/list, tasks/result (blocks until the task is terminal) and
//     tasks/cancel, with -32602 for an unknown, expired or foreign id, an invalid cursor, or
//     the cancellation of a terminal task.

// taskOffer records which sessions were offered tasks at initialize (protocol 2025-11-25 on
// stdio or Streamable HTTP), with the client's name for the event log's actor.
type taskOffer struct {
	mu     sync.Mutex
	owners map[string]string // session id → actor
}

func newTaskOffer() *taskOffer { return &taskOffer{owners: map[string]string{}} }

// offered reports whether session id may create tasks, and its actor.
func (o *taskOffer) offered(id string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	a, ok := o.owners[id]
	return a, ok
}

func (o *taskOffer) drop(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.owners, id)
}

// install adds the hooks that offer tasks: the initialize result keeps the tasks capability
// only where this server answers the task methods itself (2025-11-25 on stdio and Streamable
// HTTP); legacy SSE, older revisions and the stateless 2026-07-28 revision (whose tasks are an
// extension of another shape) are not offered tasks, and a tools/call that reaches mcp-go
// with params.task anyway runs as a normal call (the spec's rule for a receiver that did not
// declare tasks), logged, instead of mcp-go's task path.
func (o *taskOffer) install(h *server.Hooks, s *Server) {
	h.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		sess := server.ClientSessionFromContext(ctx)
		route, onStdio := ctx.Value(stdioRouteKey{}).(*stdioRoute)
		_, onHTTP := ctx.Value(initSlotKey{}).(*initSlot)
		if sess == nil || res.ProtocolVersion != mcp.ProtocolVersion20251125 || !(onStdio || onHTTP) {
			res.Capabilities.Tasks = nil
			return
		}
		o.mu.Lock()
		o.owners[sess.SessionID()] = actor(ctx)
		o.mu.Unlock()
		if onStdio {
			route.setTaskOwner(sess.SessionID())
		}
	})
	h.AddAfterDiscover(func(_ context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		res.Capabilities.Tasks = nil
	})
	h.AddBeforeCallTool(func(_ context.Context, id any, req *mcp.CallToolRequest) {
		if req.Params.Task != nil {
			s.log.Info("ran a tools/call with params.task as a normal call: tasks are not offered to this session (legacy SSE, a revision before 2025-11-25, or 2026-07-28)",
				"tool", req.Params.Name, "id", id)
			req.Params.Task = nil
		}
	})
}

// taskParams is what taskRequest reads of a message's params.
type taskParams struct {
	Name   string          `json:"name"`
	Task   json.RawMessage `json:"task"`
	TaskID *string         `json:"taskId"`
	Cursor *string         `json:"cursor"`
}

// taskRequest reports whether the message (already checked) is one answerTask answers.
func taskRequest(head messageHead, raw []byte) bool {
	switch mcp.MCPMethod(head.method) {
	case mcp.MethodTasksGet, mcp.MethodTasksList, mcp.MethodTasksResult, mcp.MethodTasksCancel:
		return head.id != nil
	case mcp.MethodToolsCall:
		// Most calls are not tasks: a byte scan spares them a second decoding pass. (A key
		// spelt with escapes slips past it; mcp-go then runs the call as a normal one.)
		if head.id == nil || !bytes.Contains(raw, []byte(`"task"`)) {
			return false
		}
		var m struct {
			Params taskParams `json:"params"`
		}
		return json.Unmarshal(raw, &m) == nil && len(m.Params.Task) > 0 && string(m.Params.Task) != "null"
	}
	return false
}

// taskEnv is what answerTask needs of the transport: the task base context (ends at
// shutdown), the session, its actor, and the transport's group of running task calls (which
// it waits for before it returns).
type taskEnv struct {
	base    context.Context
	owner   string
	actor   string
	token   string // the name of the bearer token the request was admitted with
	running *sync.WaitGroup
}

// answerTask answers one task request of env.owner and returns the JSON-RPC response line
// (without newline). tasks/result blocks until the task is terminal or ctx ends.
func (s *Server) answerTask(ctx context.Context, env taskEnv, head messageHead, raw []byte) []byte {
	var m struct {
		Params taskParams `json:"params"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return rpcErrorLine(&rpcProblem{Code: mcp.INVALID_PARAMS, ID: head.id, Message: "invalid params: " + err.Error()})
	}
	var res any
	var p *rpcProblem
	switch mcp.MCPMethod(head.method) {
	case mcp.MethodToolsCall:
		res, p = s.createTask(env, head, raw, m.Params.Name)
	case mcp.MethodTasksList:
		res, p = s.listTasks(env.owner, m.Params.Cursor)
	default:
		res, p = s.oneTask(ctx, env.owner, head.method, m.Params.TaskID)
	}
	if p != nil {
		p.ID = head.id
		return rpcErrorLine(p)
	}
	return resultLine(head.id, res)
}

// createTask starts a task for a tools/call.
func (s *Server) createTask(env taskEnv, head messageHead, raw []byte, name string) (any, *rpcProblem) {
	var tool *Tool
	for i := range s.tools {
		if s.tools[i].Tool.Name == name {
			tool = &s.tools[i]
		}
	}
	if tool == nil || !isTaskTool(name) {
		return nil, &rpcProblem{Code: mcp.METHOD_NOT_FOUND, Message: fmt.Sprintf("tool %q cannot be called as a task (its execution.taskSupport is forbidden): call it without params.task; dispatch and claim_mission can be called as tasks", clip(name, 64))}
	}
	if err := refuseInvalidUTF8(raw, head.id, s.log); err != nil {
		return nil, &rpcProblem{Code: mcp.INVALID_PARAMS, Message: err.Error()}
	}
	var req mcp.CallToolRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, &rpcProblem{Code: mcp.INVALID_PARAMS, Message: "invalid params: " + err.Error() + " (send params.name, params.arguments and params.task {ttl})"}
	}
	ttl, p := taskTTL(req.Params.Task)
	if p != nil {
		return nil, p
	}
	t, ctx, err := s.tasks.add(env.base, env.owner, name, ttl)
	if err != nil {
		s.log.Info("refused a task", "session", env.owner, "tool", name, "why", err.Error())
		return nil, &rpcProblem{Code: mcp.INVALID_REQUEST, Message: err.Error()}
	}
	ctx = withTokenName(context.WithValue(ctx, actorKey{}, env.actor), env.token)
	req.Params.Task = nil
	created := t.view() // before the call runs: a task starts working (spec), however fast it ends
	env.running.Go(func() { s.runTask(ctx, t, tool.Handler, req) })
	s.log.Info("MCP task created", "task", t.id, "tool", name, "session", env.owner, "ttl", ttl)
	return mcp.CreateTaskResult{Task: created, Result: mcp.Result{Meta: mcp.WithModelImmediateResponse(
		"The " + name + " call runs as task " + t.id + "; its result comes with tasks/result. The voyage or mission it waits on is durable: voyage_status and get_mission show it at any time.")}}, nil
}

// taskTTL is the ttl granted for a request's task params: the default when none is asked,
// at least a minute, at most taskTTLMax.
func taskTTL(tp *mcp.TaskParams) (time.Duration, *rpcProblem) {
	if tp == nil || tp.TTL == nil {
		return taskTTLDefault, nil
	}
	if *tp.TTL < 0 {
		return 0, &rpcProblem{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("task.ttl: %d is negative; send a lifetime in milliseconds (at most %d) or leave it out", *tp.TTL, taskTTLMax.Milliseconds())}
	}
	return min(max(time.Duration(*tp.TTL)*time.Millisecond, time.Minute), taskTTLMax), nil
}

// runTask runs the tool's handler as task t and records how it ended.
func (s *Server) runTask(ctx context.Context, t *taskRec, h server.ToolHandlerFunc, req mcp.CallToolRequest) {
	defer t.cancel()
	res, err := safeCall(ctx, h, req)
	var ended bool
	switch {
	case ctx.Err() != nil:
		why := context.Cause(ctx).Error()
		ended = t.finish(mcp.TaskStatusCancelled, "the call ended: "+why, nil,
			&rpcProblem{Code: mcp.REQUEST_INTERRUPTED, Message: "the task's call ended: " + why})
	case err != nil:
		ended = t.finish(mcp.TaskStatusFailed, err.Error(), nil, &rpcProblem{Code: mcp.INTERNAL_ERROR, Message: err.Error()})
	case res.IsError:
		ended = t.finish(mcp.TaskStatusFailed, resultText(res), res, nil)
	default:
		ended = t.finish(mcp.TaskStatusCompleted, "the call returned its result: read it with tasks/result", res, nil)
	}
	v := t.view()
	if !ended {
		s.log.Info("a task's call returned after the task had ended; its result is dropped (the voyage or mission keeps its durable state)",
			"task", t.id, "tool", t.tool, "status", v.Status, "why", v.StatusMessage)
		return
	}
	s.log.Info("MCP task ended", "task", t.id, "tool", t.tool, "status", v.Status, "message", clip(v.StatusMessage, 200))
}

// safeCall runs h, turning a panic into an error.
func safeCall(ctx context.Context, h server.ToolHandlerFunc, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("panic in tool %s: %v", req.Params.Name, r)
		}
	}()
	res, err = h(ctx, req)
	if err == nil && res == nil {
		err = fmt.Errorf("tool %s returned no result", req.Params.Name)
	}
	return res, err
}

// resultText is the text content of a result (the message of an isError result).
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return clip(b.String(), 1000)
}

// oneTask answers tasks/get, tasks/result and tasks/cancel.
func (s *Server) oneTask(ctx context.Context, owner, method string, id *string) (any, *rpcProblem) {
	if id == nil || *id == "" {
		return nil, &rpcProblem{Code: mcp.INVALID_PARAMS, Message: "params.taskId: required; send the taskId that the tools/call with params.task returned"}
	}
	t, p := s.tasks.get(owner, *id)
	if p != nil {
		return nil, p
	}
	switch mcp.MCPMethod(method) {
	case mcp.MethodTasksGet:
		return mcp.GetTaskResult{Task: t.view()}, nil
	case mcp.MethodTasksCancel:
		if !t.cancelFor("cancelled by tasks/cancel (the voyage or mission itself is not cancelled: use cancel_voyage or cancel_mission for that)") {
			return nil, &rpcProblem{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("Cannot cancel task: already in terminal status '%s'", t.view().Status)}
		}
		s.log.Info("MCP task cancelled", "task", t.id, "tool", t.tool, "session", owner)
		return mcp.CancelTaskResult{Task: t.view()}, nil
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, &rpcProblem{Code: mcp.REQUEST_INTERRUPTED, Message: "tasks/result ended before the task did (" + ctx.Err().Error() + "); the task goes on: call tasks/result again"}
	}
	t.mu.Lock()
	res, rpcErr := t.result, t.rpcErr
	t.mu.Unlock()
	if rpcErr != nil {
		cp := *rpcErr
		return nil, &cp
	}
	out := *res
	meta := mcp.WithRelatedTask(t.id)
	if res.Meta != nil {
		for k, v := range res.Meta.AdditionalFields {
			if k != mcp.RelatedTaskMetaKey {
				meta.AdditionalFields[k] = v
			}
		}
	}
	out.Meta = meta
	return out, nil
}

// listTasks answers tasks/list: owner's tasks oldest first, taskListPage a page. The cursor
// is opaque to clients: the creation time and id of the last task of the previous page.
func (s *Server) listTasks(owner string, cursor *string) (any, *rpcProblem) {
	all := s.tasks.list(owner)
	start := 0
	if cursor != nil {
		at, id, ok := decodeTaskCursor(*cursor)
		if !ok {
			return nil, &rpcProblem{Code: mcp.INVALID_PARAMS, Message: "params.cursor: not a cursor this server issued; send the nextCursor of the previous tasks/list, or no cursor for the first page"}
		}
		for start < len(all) && (all[start].created.UnixNano() < at || (all[start].created.UnixNano() == at && all[start].id <= id)) {
			start++
		}
	}
	end := min(start+taskListPage, len(all))
	res := mcp.ListTasksResult{Tasks: []mcp.Task{}}
	for _, t := range all[start:end] {
		res.Tasks = append(res.Tasks, t.view())
	}
	if end < len(all) {
		last := all[end-1]
		res.NextCursor = mcp.Cursor(base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(last.created.UnixNano(), 10) + "/" + last.id)))
	}
	return res, nil
}

func decodeTaskCursor(c string) (int64, string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", false
	}
	at, id, ok := strings.Cut(string(b), "/")
	n, err := strconv.ParseInt(at, 10, 64)
	return n, id, ok && err == nil && strings.HasPrefix(id, "task-")
}

// resultLine is a JSON-RPC success response line for id.
func resultLine(id json.RawMessage, result any) []byte {
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{mcp.JSONRPC_VERSION, id, result})
	if err != nil {
		return rpcErrorLine(&rpcProblem{Code: mcp.INTERNAL_ERROR, ID: id, Message: "encoding the result: " + err.Error()})
	}
	return b
}
