package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves MCP over a pair of streams (os.Stdin and os.Stdout in production) until
// the input ends or ctx is cancelled. Input lines pass a filter first (stdinFilter: BOM, CRLF,
// blank lines; malformed messages are answered with their JSON-RPC error). Only JSON-RPC
// messages are written to out, one per line: mcp-go's own error messages go to the logger,
// which must write elsewhere (stderr). A request's notifications (progress, logs) are written
// by the request itself through the same writer as its result (stdioRoute), so they come
// before the result and in the order they were sent.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	st := server.NewStdioServer(s.mcp)
	st.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelError))
	lw := &lockedWriter{w: out}
	route := &stdioRoute{out: lw}
	st.SetContextFunc(func(ctx context.Context) context.Context {
		return context.WithValue(ctx, stdioRouteKey{}, route)
	})
	filter := newStdinFilter(in, lw, s.log)
	var answers, calls sync.WaitGroup // blocked tasks/result answers; task calls
	filter.intercept = func(head messageHead, line []byte) bool {
		if p := s.preflight(ctx, head, line, route.modern(head)); p != nil { // preflight.go
			if _, err := lw.Write(append(rpcErrorLine(p), '\n')); err != nil {
				s.log.Error("writing an error response to stdout", "method", head.method, "err", err)
			}
			return true
		}
		return s.stdioTask(ctx, route, lw, taskEnv{base: ctx, running: &calls}, &answers, head, line)
	}
	defer func() {
		if owner := route.taskOwner(); owner != "" {
			s.tasks.endOwner(owner, "the stdio stream ended")
			s.offer.drop(owner)
		}
		answers.Wait()
		calls.Wait()
	}()
	err := st.Listen(ctx, filter, lw)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// lockedWriter serialises writes to stdout between mcp-go (which writes each message, newline
// included, in one Write), the stdin filter's error responses and the requests' own
// notifications (stdioRoute), so lines never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Why stdioRoute exists. mcp-go v1.2.1's stdio transport delivers a notification sent with
// SendNotificationToClient through the session's notification channel, which a second
// goroutine drains onto stdout, while a tool call's result is written by the worker that ran
// the call. So a progress notification sent just before a call returns could reach stdout
// after the call's result (seen in TestStdio_ProgressBeforeResult). The stdio server's context
// (mcp-go's StdioContextFunc, which every request's context derives from) carries a
// stdioRoute instead: notify writes the request's notification at once through the writer
// mcp-go writes the result with, so stdout shows them in the order they were sent, and the
// result, written after the handler returned, comes last. Notifications that belong to no
// request (resource and list changes) keep mcp-go's channel.
type stdioRoute struct {
	out io.Writer // the lockedWriter shared with mcp-go

	mu      sync.Mutex
	owner   string // the session id, once initialize offered it tasks (taskrpc.go)
	version string // the protocol version initialize agreed on
}

// installStdioVersion records on a stdio session's route the protocol version its
// initialize agreed on (for preflight's choice of code).
func installStdioVersion(h *server.Hooks) {
	h.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if route, ok := ctx.Value(stdioRouteKey{}).(*stdioRoute); ok {
			route.mu.Lock()
			route.version = res.ProtocolVersion
			route.mu.Unlock()
		}
	})
}

// modern reports whether a request is of protocol 2026-07-28 or later, as mcp-go decides
// (server.RequestProtocolVersion): the version in its _meta, else the session's.
func (r *stdioRoute) modern(head messageHead) bool {
	if head.metaVersion != "" {
		return mcp.IsModernProtocol(head.metaVersion)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return mcp.IsModernProtocol(r.version)
}

func (r *stdioRoute) setTaskOwner(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.owner = id
}

func (r *stdioRoute) taskOwner() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.owner
}

// stdioTask answers a task request (taskrpc.go) of a stdio session that was offered tasks,
// and reports whether it did. tasks/result, which blocks, is answered from its own goroutine
// (answers) so that reading stdin goes on; the others are answered before the next line is
// read, so a tasks/get right after the tools/call that created the task finds it.
func (s *Server) stdioTask(ctx context.Context, route *stdioRoute, out io.Writer, env taskEnv, answers *sync.WaitGroup, head messageHead, line []byte) bool {
	owner := route.taskOwner()
	actor, ok := s.offer.offered(owner)
	if !ok || !taskRequest(head, line) {
		return false
	}
	env.owner, env.actor = owner, actor
	write := func(reply []byte) {
		if _, err := out.Write(append(reply, '\n')); err != nil {
			s.log.Error("writing a task response to stdout", "method", head.method, "err", err)
		}
	}
	if head.method != string(mcp.MethodTasksResult) {
		write(s.answerTask(ctx, env, head, line))
		return true
	}
	line = bytes.Clone(line)
	answers.Go(func() { write(s.answerTask(ctx, env, head, line)) })
	return true
}

type stdioRouteKey struct{}

// send writes one notification as one line, once the client has initialized (as mcp-go's
// SendNotificationToClient: before that it returns server.ErrNotificationNotInitialized and
// writes nothing). It blocks while stdout does (a client that does not read its stdout
// stalls the call, as it stalls mcp-go's own result writes); a write error (the client went
// away) is returned and loses only the notification.
func (r *stdioRoute) send(ctx context.Context, method string, params map[string]any) error {
	if sess := server.ClientSessionFromContext(ctx); sess == nil || !sess.Initialized() {
		return fmt.Errorf("%s: %w", method, server.ErrNotificationNotInitialized)
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}}}
	b, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("%s: encoding the notification: %w", method, err)
	}
	if _, err := r.out.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("%s: writing the notification to stdout: %w", method, err)
	}
	return nil
}
