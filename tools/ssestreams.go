package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The legacy HTTP+SSE transport (/sse and /message, protocol 2024-11-05) made to follow the
// same stream rules as Streamable HTTP:
//
//   - order: mcp-go queues a call's response straight onto the session's event queue but a
//     notification through a channel and a second goroutine, so a progress notification
//     could come after the result it belongs to. notify queues the request's notifications
//     onto the event queue itself (SSEServer.SendEventToSession), before the response.
//   - disconnects: mcp-go runs each /message call on a context detached from every HTTP
//     request, so a waiting call outlived its client by up to its whole wait. The tools'
//     context ends when the session's stream does (boundToStream).
//   - keepalives: mcp-go's ping requests become SSE comments (see Write).
//   - ids and resumption: every event but keepalives gets an id "<session>-<n>" and is
//     kept in the bounded event store; a GET /sse with Last-Event-ID opens a new session (the
//     transport has no other way) and first replays what the old stream sent after that id.
//     Only a client that received the old stream knows its session id, so no event reaches
//     another client.

// sessionLife keeps, for every registered MCP session, a channel closed when it ends.
type sessionLife struct {
	mu   sync.Mutex
	live map[string]chan struct{}
}

func newSessionLife() *sessionLife { return &sessionLife{live: map[string]chan struct{}{}} }

func (l *sessionLife) install(h *server.Hooks) {
	h.AddOnRegisterSession(func(_ context.Context, sess server.ClientSession) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, ok := l.live[sess.SessionID()]; !ok {
			l.live[sess.SessionID()] = make(chan struct{})
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if c, ok := l.live[sess.SessionID()]; ok {
			close(c)
			delete(l.live, sess.SessionID())
		}
	})
}

// ended returns the channel closed when session id ends (already closed if it is not live).
func (l *sessionLife) ended(id string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.live[id]; ok {
		return c
	}
	c := make(chan struct{})
	close(c)
	return c
}

// sseRoute is what a /message call knows of its SSE session.
type sseRoute struct {
	sse     *server.SSEServer
	session string
	ended   <-chan struct{}
}

type sseRouteKey struct{}

// sseContext is the SSE transport's context function: it records the call's session.
func sseContext(sse **server.SSEServer, life *sessionLife) server.SSEContextFunc {
	return func(ctx context.Context, r *http.Request) context.Context {
		id := r.URL.Query().Get("sessionId")
		return context.WithValue(ctx, sseRouteKey{}, &sseRoute{sse: *sse, session: id, ended: life.ended(id)})
	}
}

// boundToStream returns ctx ended also when the legacy SSE stream of the call's session
// ends (other transports already end the context with the request). stop releases it.
func boundToStream(ctx context.Context) (context.Context, context.CancelFunc) {
	rt, ok := ctx.Value(sseRouteKey{}).(*sseRoute)
	if !ok {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-rt.ended:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// sendSSE queues a notification of the call onto its session's event queue.
func (rt *sseRoute) send(method string, params map[string]any) error {
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}}}
	return rt.sse.SendEventToSession(rt.session, n)
}

// sseStore is the event store's session key of a legacy SSE session.
func sseStore(session string) string { return "sse:" + session }

// withSSEIDs serves next (mcp-go's /sse handler) giving events ids, and replays from
// Last-Event-ID; an id this server cannot replay from gets 400 before any stream opens.
func withSSEIDs(next http.Handler, store *eventStore, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &sseIDWriter{ResponseWriter: w, store: store, log: log}
		sw.flusher, _ = w.(http.Flusher)
		if last := r.Header.Get("Last-Event-ID"); last != "" {
			i := strings.LastIndexByte(last, '-')
			if i <= 0 || !store.known(sseStore(last[:i]), last[i+1:]) {
				http.Error(w, "Unknown Last-Event-ID: "+last+" (reconnect without it)", http.StatusBadRequest)
				return
			}
			sw.resume, sw.resumeSeq = last[:i], last[i+1:]
		}
		next.ServeHTTP(sw, r)
	})
}

// sseIDWriter is the response of one /sse stream.
type sseIDWriter struct {
	http.ResponseWriter
	flusher           http.Flusher
	store             *eventStore
	log               *slog.Logger
	session           string // learnt from the endpoint event
	resume, resumeSeq string // the session and event to replay after, from Last-Event-ID
}

func (sw *sseIDWriter) Unwrap() http.ResponseWriter { return sw.ResponseWriter }

func (sw *sseIDWriter) Flush() {
	if sw.flusher != nil {
		sw.flusher.Flush()
	}
}

var (
	sseEndpointPrefix = []byte("event: endpoint\ndata: ")
	sseMessagePrefix  = []byte("event: message\ndata:")
)

// Write is mcp-go writing one whole event (it writes each with one call).
func (sw *sseIDWriter) Write(b []byte) (int, error) {
	switch {
	case bytes.HasPrefix(b, sseEndpointPrefix):
		sw.session = endpointSession(b[len(sseEndpointPrefix):])
		if _, err := sw.ResponseWriter.Write(b); err != nil {
			return 0, err
		}
		sw.replay()
		return len(b), nil
	case sw.session != "" && bytes.HasPrefix(b, sseMessagePrefix):
		data := bytes.TrimSpace(b[len(sseMessagePrefix):])
		if isPing(data) {
			// A keepalive becomes an SSE comment: mcp-go's SSE client (v1.2.1) takes a ping
			// request whose id equals one of its pending calls' for that call's (empty)
			// response, and the ids of both count 1, 2, 3…
			if _, err := fmt.Fprint(sw.ResponseWriter, keepAliveComment); err != nil {
				return 0, err
			}
			return len(b), nil
		}
		id, _ := sw.store.StoreEvent(context.Background(), sseStore(sw.session), "sse", data)
		if _, err := fmt.Fprintf(sw.ResponseWriter, "id: %s-%s\n", sw.session, id); err != nil {
			return 0, err
		}
	}
	return sw.ResponseWriter.Write(b)
}

// replay writes what the resumed session's stream sent after the Last-Event-ID.
func (sw *sseIDWriter) replay() {
	if sw.resume == "" {
		return
	}
	_, err := sw.store.ReplayEventsAfter(context.Background(), sseStore(sw.resume), sw.resumeSeq, func(id string, m json.RawMessage) error {
		_, err := fmt.Fprintf(sw.ResponseWriter, "id: %s-%s\nevent: message\ndata: %s\n\n", sw.resume, id, m)
		return err
	})
	if err != nil {
		sw.log.Warn("legacy SSE replay stopped", "session", sw.resume, "err", err)
	}
}

// endpointSession reads the sessionId of the endpoint event's URL.
func endpointSession(data []byte) string {
	u, err := url.Parse(string(bytes.TrimSpace(data)))
	if err != nil {
		return ""
	}
	return u.Query().Get("sessionId")
}

// isPing reports whether an event's data is a keepalive ping request.
func isPing(data []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(data, &m) == nil && m.Method == string(mcp.MethodPing)
}

// ssePreflight answers a /message request that preflight (preflight.go) refuses by queueing
// its JSON-RPC error on the session's stream, as mcp-go queues its responses. It reports
// false, leaving the request to mcp-go, when the session is unknown or its queue is full
// (mcp-go then answers 400, or the handler's error).
func (s *Server) ssePreflight(sse *server.SSEServer) func(r *http.Request, head messageHead) bool {
	return func(r *http.Request, head messageHead) bool {
		sid := r.URL.Query().Get("sessionId")
		if sid == "" {
			return false
		}
		p := s.preflight(r.Context(), head, head.raw, mcp.IsModernProtocol(head.metaVersion))
		if p == nil {
			return false
		}
		if err := sse.SendEventToSession(sid, json.RawMessage(rpcErrorLine(p))); err != nil {
			s.log.Info("left a refused legacy SSE request to mcp-go", "session", sid, "method", head.method, "err", err)
			return false
		}
		return true
	}
}
