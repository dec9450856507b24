package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// MCP tasks (protocol 2025-11-25, docs/mcp.md "Tasks"). mcp-go v1.2.1 runs a tool called as
// a task on the request's context, which ends when the CreateTaskResult is written, so its
// tasks are cancelled at once; this file keeps the server's own task records instead, and
// taskrpc.go answers tools/call with a task and the tasks/* methods before mcp-go sees them.
// A task is a view of one waiting call (dispatch or claim_mission with wait_seconds): the
// voyage or mission it waits on is durable and never depends on it. Records live in memory,
// bound to the session that created them; a restart forgets them, and their ids then get
// the spec's unknown-task error.

// Task bounds and defaults (documented in docs/mcp.md, "Tasks").
const (
	// taskTTLDefault is the ttl of a task whose request names none; taskTTLMax caps a
	// requested one. The ttl counts from creation; a task is forgotten once it is terminal
	// and its ttl has passed (a working task is kept until it ends).
	taskTTLDefault = time.Hour
	taskTTLMax     = 24 * time.Hour
	// taskMaxPerOwner bounds the records of one session; creating one more forgets the
	// oldest terminal record, and is refused while all of them are still working.
	taskMaxPerOwner = 64
	// taskListPage is the page size of tasks/list.
	taskListPage = 50
	// expiredMemory bounds how many forgotten task ids are remembered for the "expired" error.
	expiredMemory = 1024
)

// taskPoll is the poll interval suggested per tool (ms): a voyage settles in minutes, a claim
// waits seconds.
var taskPoll = map[string]time.Duration{"dispatch": 5 * time.Second, "claim_mission": 2 * time.Second}

// taskTools are the tools that may be called as tasks (execution.taskSupport "optional").
func isTaskTool(name string) bool { _, ok := taskPoll[name]; return ok }

// taskRec is one task: its public state, and what tasks/result answers once it is terminal.
// Fields after mu are guarded by it.
type taskRec struct {
	id, owner, tool string
	created         time.Time
	ttl, poll       time.Duration
	cancel          context.CancelFunc
	done            chan struct{} // closed when the status becomes terminal

	mu      sync.Mutex
	status  mcp.TaskStatus
	message string
	updated time.Time
	result  *mcp.CallToolResult // completed or failed with a tool result
	rpcErr  *rpcProblem         // failed with a JSON-RPC error, or cancelled
}

// view is the task as the protocol shows it.
func (t *taskRec) view() mcp.Task {
	t.mu.Lock()
	defer t.mu.Unlock()
	ttl, poll := t.ttl.Milliseconds(), t.poll.Milliseconds()
	return mcp.Task{TaskId: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: t.created.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.updated.UTC().Format(time.RFC3339Nano),
		TTL: &ttl, PollInterval: &poll}
}

// note records a progress message of the running call as the task's status message.
func (t *taskRec) note(msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status == mcp.TaskStatusWorking && msg != "" {
		t.message, t.updated = msg, time.Now()
	}
}

// finish moves a working task to a terminal status; it reports false (and changes nothing)
// when the task is terminal already (a cancelled task stays cancelled, spec).
func (t *taskRec) finish(status mcp.TaskStatus, msg string, res *mcp.CallToolResult, rpcErr *rpcProblem) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status.IsTerminal() {
		return false
	}
	t.status, t.message, t.updated, t.result, t.rpcErr = status, msg, time.Now(), res, rpcErr
	close(t.done)
	return true
}

// terminal reports whether the task has ended, and when it was last updated.
func (t *taskRec) terminal() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status.IsTerminal()
}

// errShuttingDown is the cause given to task calls when the server stops.
var errShuttingDown = errors.New("the server is shutting down")

type taskRecKey struct{}

// taskFromContext returns the task a call runs as, nil for a normal call.
func taskFromContext(ctx context.Context) *taskRec {
	t, _ := ctx.Value(taskRecKey{}).(*taskRec)
	return t
}

// taskTable holds the tasks of one Server; it is safe for concurrent use.
type taskTable struct {
	log *slog.Logger

	mu      sync.Mutex
	byID    map[string]*taskRec
	expired map[string]bool // forgotten ids (bounded by expiredOrder)
	order   []string
}

func newTaskTable(log *slog.Logger) *taskTable {
	return &taskTable{log: log, byID: map[string]*taskRec{}, expired: map[string]bool{}}
}

// errTooManyTasks is the refusal when an owner's records are all still working.
var errTooManyTasks = fmt.Errorf("too many tasks: %d tasks of this session are still working; wait for one to end (tasks/result) or cancel one (tasks/cancel)", taskMaxPerOwner)

// add creates a working task for owner and returns it with the context its call runs on,
// derived from base (the transport's lifetime) without the request's cancellation.
func (tt *taskTable) add(base context.Context, owner, tool string, ttl time.Duration) (*taskRec, context.Context, error) {
	now := time.Now()
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.pruneLocked(now)
	if !tt.roomLocked(owner) {
		return nil, nil, errTooManyTasks
	}
	ctx, cancel := context.WithCancel(base)
	t := &taskRec{id: newTaskID(), owner: owner, tool: tool, created: now, ttl: ttl, poll: taskPoll[tool],
		cancel: cancel, done: make(chan struct{}), status: mcp.TaskStatusWorking, updated: now,
		message: "the call is running; poll tasks/get, or call tasks/result to wait for its result"}
	tt.byID[t.id] = t
	return t, context.WithValue(ctx, taskRecKey{}, t), nil
}

// roomLocked makes room for one more record of owner, forgetting its oldest terminal one at
// the bound; it reports false when all its records are working.
func (tt *taskTable) roomLocked(owner string) bool {
	var mine []*taskRec
	for _, t := range tt.byID {
		if t.owner == owner {
			mine = append(mine, t)
		}
	}
	if len(mine) < taskMaxPerOwner {
		return true
	}
	slices.SortFunc(mine, func(a, b *taskRec) int { return a.created.Compare(b.created) })
	for _, t := range mine {
		if t.terminal() {
			tt.forgetLocked(t.id)
			return true
		}
	}
	return false
}

// pruneLocked forgets terminal tasks whose ttl has passed.
func (tt *taskTable) pruneLocked(now time.Time) {
	for id, t := range tt.byID {
		if now.Sub(t.created) >= t.ttl && t.terminal() {
			tt.forgetLocked(id)
		}
	}
}

func (tt *taskTable) forgetLocked(id string) {
	delete(tt.byID, id)
	tt.expired[id] = true
	tt.order = append(tt.order, id)
	if len(tt.order) > expiredMemory {
		delete(tt.expired, tt.order[0])
		tt.order = tt.order[1:]
	}
}

// get returns owner's task id, or the spec's error (-32602) for an id that is unknown,
// forgotten or another session's (which is not told apart from unknown).
func (tt *taskTable) get(owner, id string) (*taskRec, *rpcProblem) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.pruneLocked(time.Now())
	t, ok := tt.byID[id]
	switch {
	case ok && t.owner == owner:
		return t, nil
	case !ok && tt.expired[id]:
		return nil, &rpcProblem{Code: mcp.INVALID_PARAMS, Message: "Failed to retrieve task: Task has expired (its ttl passed after it ended); read the voyage or mission itself with voyage_status or get_mission"}
	}
	return nil, &rpcProblem{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("Failed to retrieve task: Task not found: no task %q in this session (tasks live in memory and end with their session or a server restart); read the voyage or mission itself with voyage_status or get_mission", clip(id, 80))}
}

// list returns owner's tasks, oldest first.
func (tt *taskTable) list(owner string) []*taskRec {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.pruneLocked(time.Now())
	var out []*taskRec
	for _, t := range tt.byID {
		if t.owner == owner {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *taskRec) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return compareStrings(a.id, b.id)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cancel moves a working task to cancelled with why, then stops its call. It reports false
// for a task that is terminal already.
func (t *taskRec) cancelFor(why string) bool {
	ok := t.finish(mcp.TaskStatusCancelled, why, nil,
		&rpcProblem{Code: mcp.REQUEST_INTERRUPTED, Message: "the task was cancelled: " + why})
	t.cancel()
	return ok
}

// endOwner cancels owner's working tasks with why (its session ended) and forgets them all.
func (tt *taskTable) endOwner(owner, why string) {
	tt.mu.Lock()
	var mine []*taskRec
	for id, t := range tt.byID {
		if t.owner == owner {
			mine = append(mine, t)
			delete(tt.byID, id)
		}
	}
	tt.mu.Unlock()
	n := 0
	for _, t := range mine {
		if t.cancelFor(why) {
			n++
		}
	}
	if n > 0 {
		tt.log.Info("MCP tasks cancelled", "session", owner, "why", why, "tasks_cancelled", n)
	}
}

// newTaskID returns "task-" and 128 random bits in hex: unguessable, as the spec asks of a
// server whose tasks are bound to a session but reachable by id.
func newTaskID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "task-" + hex.EncodeToString(b[:])
}
