package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// mcpGate stands in front of mcp-go's Streamable HTTP server at /mcp and applies what mcp-go
// leaves out (docs/mcp.md, "Sessions", "JSON-RPC", "Versions"), in this order:
//
//  1. a POST body over the cap gets 413, one that checkMessage refuses 400; both with the
//     JSON-RPC error as body;
//  2. a request of the stateless revision (2026-07-28: MCP-Protocol-Version header or
//     _meta) goes to mcp-go as it is: it needs no session;
//  3. an MCP-Protocol-Version header naming no revision this server implements gets 400;
//  4. initialize is answered by mcp-go; the session it minted becomes live only if the
//     answer is a result (a refused initialize creates nothing), which may evict the
//     longest-idle session past max_sessions;
//  5. any other POST, GET or DELETE without Mcp-Session-Id gets 400, with an id that is not a
//     live session of this process 404; a DELETE ends the session (its requests in flight are
//     cancelled, its subscriptions dropped) and a GET or POST runs with a context the session's
//     end cancels.
//
// Error bodies are JSON-RPC error responses saying what to do; the id is the request's when
// it is valid, else null.
type mcpGate struct {
	inner http.Handler // mcp-go's *server.StreamableHTTPServer
	table *sessionTable
	log   *slog.Logger
	// tasks answers the task methods of sessions offered tasks (taskrpc.go), wrapped like
	// mcp-go in a POST stream (keepalives, event ids); nil: none are.
	tasks func(head messageHead, env taskEnv) http.Handler
	srv   *Server
	// taskBase is the context task calls run on: it ends when the server shuts down;
	// taskCalls counts the running ones (ServeHTTP waits for them before it returns).
	taskBase  context.Context
	taskCalls sync.WaitGroup
	// node is HTTPOptions.Node: this node's name in a cluster, "" for a single node.
	node string
}

// Codes of the gate's session errors (-32001 for an unknown session, as the TypeScript SDK
// answers).
const (
	codeSessionNotFound = -32001
)

func (g *mcpGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		g.post(w, r)
	case http.MethodGet, http.MethodDelete:
		g.bodiless(w, r)
	default:
		g.inner.ServeHTTP(w, r)
	}
}

// post gates a POST: steps 1 to 5.
func (g *mcpGate) post(w http.ResponseWriter, r *http.Request) {
	head, ok := readMessage(w, r, g.log)
	if !ok {
		return
	}
	if isModern(r.Header, head.metaVersion) {
		if modernHeadersOK(r.Header, head) {
			g.preflighted(head, true).ServeHTTP(w, r)
			return
		}
		g.inner.ServeHTTP(w, r) // mcp-go refuses the headers itself
		return
	}
	if head.method == string(mcp.MethodInitialize) {
		g.initialize(w, r)
		return
	}
	if !g.versionOK(w, r, head.id) {
		return
	}
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		g.refuse(w, http.StatusBadRequest, mcp.INVALID_REQUEST, head.id,
			"missing "+server.HeaderKeySessionID+" header: send initialize first and carry the "+
				server.HeaderKeySessionID+" it returns on every later request (or use protocol "+
				mcp.ProtocolVersion20260728+", which needs no session)", r)
		return
	}
	if head.method == "" {
		g.clientResponse(w, r, sid)
		return
	}
	if g.tasks != nil && taskRequest(head, head.raw) {
		if actor, ok := g.srv.offer.offered(sid); ok {
			g.inSessionWith(w, r, sid, head.id, g.tasks(head, taskEnv{base: g.taskBase, owner: sid, actor: actor, token: TokenName(r.Context()), running: &g.taskCalls}))
			return
		}
	}
	g.inSessionWith(w, r, sid, head.id, g.preflighted(head, false))
}

// preflighted serves a request with mcp-go unless preflight (preflight.go) answers it: with
// the JSON-RPC error as body, HTTP 200 in a session and, on the stateless revision (which
// maps JSON-RPC errors onto HTTP statuses, as mcp-go does), 400.
func (g *mcpGate) preflighted(head messageHead, modern bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := g.srv.preflight(r.Context(), head, head.raw, modern)
		if p == nil {
			g.inner.ServeHTTP(w, r)
			return
		}
		status := http.StatusOK
		if modern {
			status = http.StatusBadRequest
		}
		writeRPCError(w, status, p)
	})
}

// clientResponse serves a JSON-RPC response the client POSTs (to a ping on the GET stream,
// to a sampling or elicitation request). mcp-go answers 400 for one that answers no pending
// request of the server; the transport's rule is 202 for any body of only responses, so the
// gate answers 202 and logs what mcp-go said.
func (g *mcpGate) clientResponse(w http.ResponseWriter, r *http.Request, sid string) {
	buf := &bufferedWriter{header: http.Header{}}
	g.inSession(buf, r, sid, nil)
	if buf.status == http.StatusBadRequest {
		g.log.Info("ignored a client response that answers no pending request", "session", sid,
			"detail", strings.TrimSpace(buf.body.String()))
		w.WriteHeader(http.StatusAccepted)
		return
	}
	buf.writeTo(w)
}

// bodiless gates GET (the standalone stream) and DELETE (end of session).
func (g *mcpGate) bodiless(w http.ResponseWriter, r *http.Request) {
	if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		g.inner.ServeHTTP(w, r) // mcp-go: 405, the revision has no GET stream and no sessions
		return
	}
	if !g.versionOK(w, r, nil) {
		return
	}
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		g.refuse(w, http.StatusBadRequest, mcp.INVALID_REQUEST, nil,
			"missing "+server.HeaderKeySessionID+" header: "+r.Method+" needs the session id that initialize returned", r)
		return
	}
	if r.Method == http.MethodGet {
		g.inSession(w, r, sid, nil)
		return
	}
	if !g.table.isLive(sid) {
		g.notFound(w, r, sid, nil, g.endedReason(sid))
		return
	}
	g.table.end(sid, "ended by the client (DELETE)")
	g.inner.ServeHTTP(w, r) // mcp-go frees the session's transport state and answers 200
}

// versionOK answers 400 and returns false when the MCP-Protocol-Version header names a
// revision this server does not implement. A missing header is accepted (2025-03-26 clients
// send none).
func (g *mcpGate) versionOK(w http.ResponseWriter, r *http.Request, id json.RawMessage) bool {
	v := r.Header.Get(mcp.HeaderProtocolVersion)
	if v == "" || mcp.IsValidProtocolVersion(v) {
		return true
	}
	g.refuse(w, http.StatusBadRequest, mcp.UNSUPPORTED_PROTOCOL_VERSION, id,
		fmt.Sprintf("unsupported %s header %q: this server implements %s", mcp.HeaderProtocolVersion, v,
			strings.Join(mcp.ValidProtocolVersions, ", ")), r)
	return false
}

// inSession serves a request of live session sid with a context that ends with the session.
func (g *mcpGate) inSession(w http.ResponseWriter, r *http.Request, sid string, id json.RawMessage) {
	g.inSessionWith(w, r, sid, id, g.inner)
}

// inSessionWith is inSession with next serving the request instead of mcp-go.
func (g *mcpGate) inSessionWith(w http.ResponseWriter, r *http.Request, sid string, id json.RawMessage, next http.Handler) {
	if !g.sameToken(w, r, sid) {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	seq, found, why := g.table.enter(sid, cancel)
	switch found {
	case sessionExpired:
		why = g.expiredReason()
		g.drop(sid, why)
		fallthrough
	case sessionUnknown:
		g.notFound(w, r, sid, id, why)
		return
	}
	defer g.table.leave(sid, seq)
	tw := &trackingWriter{ResponseWriter: w}
	next.ServeHTTP(tw, r.WithContext(ctx))
	if !tw.wrote && ctx.Err() != nil && r.Context().Err() == nil {
		// The session ended while the request ran (DELETE, eviction, shutdown): say so
		// rather than leave an empty 200.
		g.notFound(w, r, sid, id, "it ended while this request was in flight: "+g.endedReason(sid))
	}
}

// initialize lets mcp-go answer an initialize, then confirms the session it minted, or, when
// the answer is an error, discards it and removes its id from the response.
func (g *mcpGate) initialize(w http.ResponseWriter, r *http.Request) {
	slot := &initSlot{}
	buf := &bufferedWriter{header: http.Header{}}
	g.inner.ServeHTTP(buf, r.WithContext(context.WithValue(r.Context(), initSlotKey{}, slot)))
	if slot.id != "" {
		if buf.refused() {
			buf.header.Del(server.HeaderKeySessionID)
			g.drop(slot.id, "its initialize was refused")
		} else {
			evicted := g.table.confirm(slot.id)
			g.table.bind(slot.id, tokenOf(r.Context()))
			for _, victim := range evicted {
				g.drop(victim, fmt.Sprintf("evicted: %d sessions is the bound (http.max_sessions) and it was the longest idle", g.table.max))
			}
			g.log.Debug("MCP session started", "session", slot.id)
		}
	}
	buf.writeTo(w)
}

// drop ends session id for why and has mcp-go free its transport state (its DELETE path:
// notification routing, per-session stores, the subscriptions recorded by hooks).
func (g *mcpGate) drop(id, why string) {
	g.table.end(id, why)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodDelete, PathMCP, nil)
	if err != nil {
		g.log.Error("freeing an ended session", "session", id, "err", err)
		return
	}
	req.Header.Set(server.HeaderKeySessionID, id)
	g.inner.ServeHTTP(&bufferedWriter{header: http.Header{}}, req)
}

// sweep ends idle sessions every interval until ctx ends.
func (g *mcpGate) sweep(ctx context.Context) {
	interval := min(max(g.table.idle/4, 50*time.Millisecond), time.Minute)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			for _, id := range g.table.expired(now) {
				g.drop(id, g.expiredReason())
			}
		}
	}
}

func (g *mcpGate) expiredReason() string {
	return fmt.Sprintf("expired: idle for %v (http.session_idle)", g.table.idle)
}

func (g *mcpGate) endedReason(sid string) string { return g.table.why(sid) }

// notFound answers 404 for a session id that is not live.
func (g *mcpGate) notFound(w http.ResponseWriter, r *http.Request, sid string, id json.RawMessage, why string) {
	msg := "session not found"
	switch {
	case why != "":
		msg += " (" + why + ")"
	case g.node != "":
		msg += " (" + g.unknownOnNode() + ")"
	case strings.HasPrefix(sid, sessionIDPrefix):
		msg += " (not issued by this server process, or ended long ago; a restart ends every session)"
	}
	g.refuse(w, http.StatusNotFound, codeSessionNotFound, id,
		msg+": send initialize without "+server.HeaderKeySessionID+" to start a new session; missions and voyages are kept", r)
}

// unknownOnNode explains an unknown session on a node of a cluster: it may be live on
// another node, which a load balancer that is not sticky sends requests away from.
func (g *mcpGate) unknownOnNode() string {
	return "this is node " + g.node + " of a cluster: a session lives on the node that created it, so route session requests sticky by " +
		server.HeaderKeySessionID + ", or use protocol " + mcp.ProtocolVersion20260728 + " (stateless), which any node serves; " +
		"otherwise it ended, or this node restarted"
}

// refuse writes a JSON-RPC error response with an HTTP status and logs the decision.
func (g *mcpGate) refuse(w http.ResponseWriter, status, code int, id json.RawMessage, msg string, r *http.Request) {
	g.log.Info("refused an MCP HTTP request", "method", r.Method, "status", status, "code", code, "why", msg)
	writeRPCError(w, status, &rpcProblem{Code: code, ID: id, Message: msg})
}

// writeRPCError writes p as the JSON body of an HTTP response with the given status.
func writeRPCError(w http.ResponseWriter, status int, p *rpcProblem) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(rpcErrorLine(p), '\n')) // the client is gone if this fails
}

// readMessage reads a POST body up to the cap and checks it (step 1). On success the body is
// put back for the next handler; otherwise the error has been answered.
func readMessage(w http.ResponseWriter, r *http.Request, log *slog.Logger) (messageHead, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxStdinMessage))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		log.Warn("refused an MCP HTTP body over the cap", "path", r.URL.Path, "cap_bytes", MaxStdinMessage)
		writeRPCError(w, http.StatusRequestEntityTooLarge, &rpcProblem{Code: mcp.PARSE_ERROR, ID: jsonNull,
			Message: fmt.Sprintf("parse error: the message is over the %d MiB cap; send smaller messages", MaxStdinMessage>>20)})
		return messageHead{}, false
	case err != nil:
		writeRPCError(w, http.StatusBadRequest, &rpcProblem{Code: mcp.PARSE_ERROR, ID: jsonNull, Message: "parse error: reading the body: " + err.Error()})
		return messageHead{}, false
	}
	head, p := inspectMessage(body)
	if p != nil {
		log.Warn("refused a malformed MCP message", "path", r.URL.Path, "code", p.Code, "reason", p.Message)
		writeRPCError(w, http.StatusBadRequest, p)
		return messageHead{}, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	head.raw = body
	return head, true
}

// modernHeadersOK reports whether a 2026-07-28 request's headers are those mcp-go requires
// (the protocol version as in _meta, no Last-Event-ID, Mcp-Method and Mcp-Name mirroring the
// body), so that preflight answers only requests mcp-go would dispatch.
func modernHeadersOK(h http.Header, head messageHead) bool {
	if h.Get(mcp.HeaderProtocolVersion) != head.metaVersion || h.Get(mcp.HeaderLastEventID) != "" ||
		h.Get(mcp.HeaderMethod) != head.method {
		return false
	}
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(head.raw, &m) != nil {
		return false
	}
	name, ok := mcp.ExtractHeaderName(mcp.MCPMethod(head.method), m.Params)
	return !ok || h.Get(mcp.HeaderName) == name
}

// isModern reports whether a request belongs to the stateless revision, as mcp-go decides:
// either its header or its _meta names 2026-07-28 or later.
func isModern(h http.Header, metaVersion string) bool {
	return mcp.IsModernProtocol(metaVersion) || mcp.IsModernProtocol(h.Get(mcp.HeaderProtocolVersion))
}

// sseMessageGate applies step 1 to the legacy SSE transport's POST endpoint, so that its
// JSON-RPC rules are those of stdio and Streamable HTTP, then lets answer (preflight) answer
// the request itself: answer reports whether it did, and the POST then gets 202 as mcp-go
// answers it (the response goes on the session's SSE stream).
func sseMessageGate(next http.Handler, log *slog.Logger, answer func(r *http.Request, head messageHead) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			head, ok := readMessage(w, r, log)
			if !ok {
				return
			}
			if answer != nil && answer(r, head) {
				w.WriteHeader(http.StatusAccepted)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
