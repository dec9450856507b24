package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Why this file exists. mcp-go v1.2.1 delivers a notification sent with
// SendNotificationToClient through the session's one notification channel. On Streamable
// HTTP, that channel is read both by the standalone GET stream of the session and by the
// forwarder of every POST in flight, so a request's progress notifications are split
// between its own POST stream and the GET stream, whichever goroutine reads first (seen:
// notifications 1 and 3 on GET, 2 and 4 on POST). mcp-go's request-scoped sender only
// carries server *requests* (sampling, elicitation), not notifications.
//
// postStream owns the response of one POST instead: the tools write their notifications
// straight onto it (notify), in order and before the result, which mcp-go writes last;
// and a keepalive comment goes out on it at a fixed interval while the request runs, so
// a long call (dispatch or claim_mission with wait_seconds) is never silent on its stream.
// mcp-go still decides the response: while nothing was streamed it writes its JSON answer
// or its own SSE as usual; once the stream is open, its JSON answer is framed as the last
// SSE event. Every event carries an id from the session's event store, so a client whose
// POST stream broke can ask for the rest with Last-Event-ID (mcp-go replays it).

// postStreamMode is who has started the response, and how.
type postStreamMode int

const (
	modeIdle      postStreamMode = iota // nothing written yet
	modeOwn                             // we opened an SSE stream; mcp-go has not answered
	modeFrame                           // we opened it, and mcp-go answers in JSON: framed as one event at finish
	modePassSSE                         // we opened it, and mcp-go answers in SSE: passed through event by event
	modeInnerSSE                        // mcp-go opened an SSE stream first: our events go between its events
	modeInnerJSON                       // mcp-go answered in JSON first: nothing more can be streamed
)

// postStream is the http.ResponseWriter mcp-go's Streamable HTTP handler writes one POST's
// answer to, and the stream the request's own notifications go to. Safe for concurrent use.
type postStream struct {
	w       http.ResponseWriter
	flusher http.Flusher
	log     *slog.Logger
	store   server.EventStore // nil: events carry no id
	session string            // Mcp-Session-Id of the request ("" for initialize and stateless requests)
	stream  string            // this stream's id in the event store

	inner http.Header // the headers mcp-go sets; copied to w when mcp-go writes first

	mu      sync.Mutex
	mode    postStreamMode
	status  int          // mcp-go's status code, once it wrote one
	pending bytes.Buffer // mcp-go's SSE bytes not yet ending an event, or its JSON body (modeFrame)
	done    bool         // the handler returned: nothing more is written
}

func newPostStream(w http.ResponseWriter, session string, store server.EventStore, log *slog.Logger) *postStream {
	ps := &postStream{w: w, log: log, session: session, store: store, stream: "post-" + rand.Text(), inner: http.Header{}}
	ps.flusher, _ = w.(http.Flusher)
	return ps
}

// Header is mcp-go's header map, private until mcp-go writes its status (so that a
// keepalive opening the stream never races mcp-go setting headers).
func (ps *postStream) Header() http.Header { return ps.inner }

// Unwrap gives http.ResponseController (mcp-go's write deadlines) the real writer.
func (ps *postStream) Unwrap() http.ResponseWriter { return ps.w }

// WriteHeader is mcp-go starting its answer.
func (ps *postStream) WriteHeader(code int) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.writeHeaderLocked(code)
}

func (ps *postStream) writeHeaderLocked(code int) {
	if ps.status != 0 {
		return
	}
	ps.status = code
	sse := strings.HasPrefix(ps.inner.Get("Content-Type"), "text/event-stream")
	switch ps.mode {
	case modeIdle:
		h := ps.w.Header()
		for k, v := range ps.inner {
			h[k] = v
		}
		ps.w.WriteHeader(code)
		ps.mode = modeInnerJSON
		if sse {
			ps.mode = modeInnerSSE
		}
	case modeOwn:
		ps.mode = modeFrame
		if sse {
			ps.mode = modePassSSE
		}
	}
}

// Write is mcp-go writing its answer.
func (ps *postStream) Write(b []byte) (int, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.status == 0 {
		ps.writeHeaderLocked(http.StatusOK)
	}
	switch ps.mode {
	case modeInnerJSON:
		return ps.w.Write(b)
	case modeFrame:
		return ps.pending.Write(b)
	default: // SSE from mcp-go: whole events only, so ours never split one
		ps.pending.Write(b)
		for {
			i := bytes.Index(ps.pending.Bytes(), []byte("\n\n"))
			if i < 0 {
				return len(b), nil
			}
			if err := ps.reframeLocked(ps.pending.Next(i + 2)); err != nil {
				return 0, err
			}
		}
	}
}

// reframeLocked writes one complete SSE block of mcp-go's (an event, or a comment) on the
// stream. An event is written again as ours: its data is recorded under this stream's id in
// the event store and sent with that id, and mcp-go's own id is dropped, so that every event
// of one POST stream has an id of one source and a resume from any of them (Last-Event-ID)
// replays the rest, the result included. mcp-go records its copy under its own stream, which
// no client is told of. A block without data (a comment) passes as it is.
func (ps *postStream) reframeLocked(block []byte) error {
	var data [][]byte
	for line := range bytes.Lines(block) {
		if d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(d, []byte(" ")))
		}
	}
	if len(data) == 0 {
		_, err := ps.w.Write(block)
		return err
	}
	ps.eventLocked(bytes.Join(data, []byte("\n"))) // a fresh slice: the store keeps it
	return nil
}

// Flush is mcp-go flushing its answer.
func (ps *postStream) Flush() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.mode != modeFrame {
		ps.flushLocked()
	}
}

func (ps *postStream) flushLocked() {
	if ps.flusher != nil {
		ps.flusher.Flush()
	}
}

// openLocked starts the SSE response when nothing was written yet; it reports whether the
// response is an SSE stream this side may write events to.
func (ps *postStream) openLocked() bool {
	if ps.done || ps.flusher == nil {
		return false
	}
	switch ps.mode {
	case modeIdle:
		h := ps.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
		ps.w.WriteHeader(http.StatusOK)
		ps.mode = modeOwn
		return true
	case modeOwn, modePassSSE, modeInnerSSE:
		return true
	}
	return false // mcp-go's answer is being written in JSON: the request is over
}

// send writes one JSON-RPC message as an SSE event with an id, opening the stream if need
// be. It reports false when the stream cannot carry it (the answer was already written, or
// the writer cannot stream).
func (ps *postStream) send(msg any) bool {
	data, err := json.Marshal(msg)
	if err != nil {
		ps.log.Warn("cannot encode a notification for the POST stream", "err", err)
		return false
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !ps.openLocked() {
		return false
	}
	ps.eventLocked(data)
	return true
}

// eventLocked records data in the event store (for resumption) and writes it.
func (ps *postStream) eventLocked(data []byte) {
	var id string
	if ps.store != nil && ps.session != "" {
		var err error
		if id, err = ps.store.StoreEvent(context.Background(), ps.session, ps.stream, data); err != nil {
			ps.log.Warn("event store refused a POST stream event; sent without an id", "err", err)
			id = ""
		}
	}
	if id != "" {
		_, _ = fmt.Fprintf(ps.w, "id: %s\n", id)
	}
	// A write error means the client went away; the handler sees its context end.
	_, _ = fmt.Fprintf(ps.w, "event: message\ndata: %s\n\n", data)
	ps.flushLocked()
}

// keepAliveComment is the SSE comment sent on idle POST streams; clients ignore comments.
const keepAliveComment = ": keepalive\n\n"

// ping writes a keepalive comment, opening the stream if mcp-go has not answered yet.
func (ps *postStream) ping() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !ps.openLocked() {
		return
	}
	_, _ = fmt.Fprint(ps.w, keepAliveComment)
	ps.flushLocked()
}

// keepAlive pings every interval until stop is called or ctx (the request's) ends; stop
// waits for the ticker goroutine to exit.
func (ps *postStream) keepAlive(ctx context.Context, every time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				ps.ping()
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// finish ends the response once mcp-go's handler returned: a JSON answer given while our
// stream was open becomes its last event, and any bytes held back are written.
func (ps *postStream) finish() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.done = true
	if ps.pending.Len() == 0 {
		return
	}
	if ps.mode == modeFrame {
		if body := bytes.TrimSpace(ps.pending.Bytes()); len(body) > 0 {
			ps.eventLocked(body)
		}
	} else {
		_, _ = ps.w.Write(ps.pending.Bytes())
		ps.flushLocked()
	}
	ps.pending.Reset()
}

type postStreamKey struct{}

// withPostStreams serves next with a postStream for each POST: the request's
// notifications travel on it (notify) and it is kept alive every keepAlive.
func withPostStreams(next http.Handler, keepAlive time.Duration, store server.EventStore, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		ps := newPostStream(w, r.Header.Get(server.HeaderKeySessionID), store, log)
		stop := ps.keepAlive(r.Context(), keepAlive)
		defer ps.finish()
		defer stop()
		next.ServeHTTP(ps, r.WithContext(context.WithValue(r.Context(), postStreamKey{}, ps)))
	})
}

// notify sends a notification that belongs to the request of ctx (progress, logs): on the
// request's own POST stream when it has one (Streamable HTTP), otherwise through the
// session's event queue on legacy SSE, straight onto stdout on stdio, otherwise through the
// client's session (in-process clients). A client that went away only loses the
// notification.
func notify(ctx context.Context, srv *server.MCPServer, method string, params map[string]any) error {
	if ps, ok := ctx.Value(postStreamKey{}).(*postStream); ok {
		n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION,
			Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}}}
		if ps.send(n) {
			return nil
		}
		return fmt.Errorf("%s: the request's stream is closed", method)
	}
	if rt, ok := ctx.Value(sseRouteKey{}).(*sseRoute); ok {
		return rt.send(method, params) // ssestreams.go: queued before the response
	}
	if rt, ok := ctx.Value(stdioRouteKey{}).(*stdioRoute); ok {
		return rt.send(ctx, method, params) // transport_stdio.go: written before the result
	}
	return srv.SendNotificationToClient(ctx, method, params)
}
