package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// HTTP endpoints.
const (
	PathMCP     = "/mcp"     // Streamable HTTP (protocol 2025-03-26 and later)
	PathSSE     = "/sse"     // legacy HTTP+SSE transport (2024-11-05): the event stream
	PathMessage = "/message" // legacy HTTP+SSE transport: where clients POST
)

// ErrInsecureBind is returned when an HTTP address that is not loopback is asked for
// without a bearer token: anyone who can reach the port could run tools (bugs.md B29).
var ErrInsecureBind = errors.New("refusing to serve HTTP on a non-loopback address without a bearer token")

// HTTPOptions configure ServeHTTP.
type HTTPOptions struct {
	// Addr is host:port to listen on (port 0 picks a free one). Default 127.0.0.1:8765.
	Addr string
	// Tokens are the bearer tokens a request may carry (Authorization: Bearer <token>), each
	// naming its agent; one is required unless Addr is a loopback address. A set read from a
	// token file follows the file: a removed line refuses its token's next request and ends
	// its open streams (tokens.go, httpauth.go).
	Tokens *Tokens
	// Token, when Tokens is nil, is one bearer token (named DefaultTokenName).
	Token string
	// AllowedOrigins are the browser origins (scheme://host[:port]) allowed besides loopback
	// ones. A request with any other Origin header gets 403.
	AllowedOrigins []string
	// KeepAlive is the interval of keepalives on every open stream (default 15s): pings on
	// the standalone GET stream and on legacy SSE, keepalive comments on POST streams.
	KeepAlive time.Duration
	// MaxSessions bounds the live Streamable HTTP sessions (default DefaultMaxSessions); past
	// it the longest-idle session is evicted.
	MaxSessions int
	// SessionIdle ends a session with no request for this long (default DefaultSessionIdle).
	SessionIdle time.Duration
	// EventBufferEvents and EventBufferBytes bound the SSE events kept for resumption with
	// Last-Event-ID (defaults DefaultEventBufferEvents, DefaultEventBufferBytes).
	EventBufferEvents, EventBufferBytes int
	// ShutdownTimeout bounds the graceful shutdown (default 5s).
	ShutdownTimeout time.Duration
	// Ready, when set, is called with the bound address once the listener is open.
	Ready func(net.Addr)
	// Dashboard, when set, serves every path the MCP endpoints do not (the web dashboard,
	// package tools/dashboard) after the Host and Origin checks; it applies the token itself
	// (its session cookie or the bearer header), because a browser cannot send the header
	// on page loads.
	Dashboard http.Handler
	// Metrics, when set, is served at /metrics behind the same guard as /mcp (PathMetrics).
	Metrics http.Handler
	// Node names this process when it is one node of a cluster (PostgreSQL store), "" when it
	// is the only one. A session lives in the memory of the node that created it, so the 404
	// for an unknown session then says to route session requests sticky by Mcp-Session-Id or
	// to use the stateless revision (docs/mcp.md, "Several nodes behind one address").
	Node string
}

// shutdownGrace is how long requests in flight keep their context after shutdown began.
const shutdownGrace = 500 * time.Millisecond

// DefaultHTTPAddr is where serve --http listens when given no address.
const DefaultHTTPAddr = "127.0.0.1:8765"

// CheckBind reports whether addr may be served, withToken telling whether requests must
// carry a bearer token: loopback always, any other address only with a token. An empty host
// (":8080") means every interface.
func CheckBind(addr string, withToken bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("http address %q: %w (give host:port, e.g. 127.0.0.1:8765)", addr, err)
	}
	if isLoopback(host) || withToken {
		return nil
	}
	return fmt.Errorf("%w: %s is not a loopback address; set a token (--token, MCP_SCHEDULER_TOKEN or [http] token_file) or bind 127.0.0.1", ErrInsecureBind, addr)
}

func isLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// ServeHTTP serves Streamable HTTP at /mcp, the legacy SSE transport at /sse (+ /message) and
// the Go runtime profiles at /debug/pprof/ until ctx ends, then shuts down gracefully: open streams are closed, in-flight requests
// finish (bounded by ShutdownTimeout). Every request passes the guard: Host and Origin
// checks (403), then the bearer token when one is set (401 with WWW-Authenticate). Then /mcp
// passes the session gate (httpgate.go: JSON-RPC check, versions, sessions bounded by
// MaxSessions and SessionIdle) and /message the JSON-RPC check; docs/mcp.md has the rules.
func (s *Server) ServeHTTP(ctx context.Context, opt HTTPOptions) error {
	if opt.Addr == "" {
		opt.Addr = DefaultHTTPAddr
	}
	if opt.KeepAlive <= 0 {
		opt.KeepAlive = 15 * time.Second
	}
	if opt.ShutdownTimeout <= 0 {
		opt.ShutdownTimeout = 5 * time.Second
	}
	if opt.MaxSessions <= 0 {
		opt.MaxSessions = DefaultMaxSessions
	}
	if opt.SessionIdle <= 0 {
		opt.SessionIdle = DefaultSessionIdle
	}
	if opt.Tokens == nil {
		opt.Tokens = FixedToken(opt.Token)
	}
	if err := CheckBind(opt.Addr, opt.Tokens != nil); err != nil {
		return err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", opt.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", opt.Addr, err)
	}
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	table := newSessionTable(opt.MaxSessions, opt.SessionIdle, s.log)
	events := newEventStore(opt.EventBufferEvents, opt.EventBufferBytes)
	streamable := server.NewStreamableHTTPServer(s.mcp,
		server.WithHeartbeatInterval(opt.KeepAlive),
		server.WithSessionIdManagerResolver(sessionResolver{table: table}), // sessions.go; the gate's sweeper ends idle ones
		server.WithEventStore(events),                                      // ids on SSE events, Last-Event-ID replay (eventstore.go)
		server.WithStreamableHTTPLogger(s.log))
	gate := &mcpGate{inner: withPostStreams(streamable, opt.KeepAlive, events, s.log), table: table, log: s.log, node: opt.Node} // httpgate.go, streams.go
	taskBase, stopTasks := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopTasks(errShuttingDown)
	gate.srv, gate.taskBase = s, taskBase
	gate.tasks = func(head messageHead, env taskEnv) http.Handler { // taskrpc.go, on a POST stream like mcp-go's answers
		return withPostStreams(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reply := s.answerTask(r.Context(), env, head, head.raw)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(append(reply, '\n')) // a write error means the client went away
		}), opt.KeepAlive, events, s.log)
	}
	table.onEnd = func(id, why string) {
		s.tasks.endOwner(id, "the session ended: "+why)
		s.offer.drop(id)
	}
	s.sessions = table
	var sse *server.SSEServer
	sse = server.NewSSEServer(s.mcp,
		server.WithSSEEndpoint(PathSSE), server.WithMessageEndpoint(PathMessage),
		server.WithKeepAlive(true), server.WithKeepAliveInterval(opt.KeepAlive),
		server.WithSSEContextFunc(sseContext(&sse, s.life))) // ssestreams.go
	mux := http.NewServeMux()
	mux.Handle(PathMCP, gate)
	mux.Handle(PathSSE, withSSEIDs(sse.SSEHandler(), events, s.log))
	mux.Handle(PathMessage, sseMessageGate(sse.MessageHandler(), s.log, s.ssePreflight(sse)))
	mountPprof(mux) // behind the same guard as /mcp: Host, Origin and the token
	if opt.Metrics != nil {
		mux.Handle(PathMetrics, opt.Metrics) // behind the same guard too (metricsserve.go)
	}
	g := &guard{loopback: isLoopback(host), origins: opt.AllowedOrigins, log: s.log}
	if opt.Tokens != nil {
		g.live = newLiveRequests(opt.Tokens, s.log)
		g.live.onRevoke = gate.endRevoked // sessiontokens.go
	}
	if opt.Dashboard != nil {
		mux.Handle("/", opt.Dashboard)
		g.selfAuth = mux
	}
	// Requests outlive ctx by a short grace at shutdown, so that a call in flight can answer;
	// then their contexts end, which releases long waits (claims, listen streams).
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	go gate.sweep(base)
	if g.live != nil {
		go g.live.watch(base)
	}
	hs := &http.Server{Handler: g.wrap(mux), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context { return base }}
	if opt.Ready != nil {
		opt.Ready(ln.Addr())
	}
	s.log.Info("serving MCP over HTTP", "addr", ln.Addr().String(), "streamable", PathMCP, "sse", PathSSE, "auth", opt.Tokens != nil, "tokens", len(opt.Tokens.Names()))
	if opt.Dashboard != nil {
		s.log.Info("serving the web dashboard", "url", "http://"+ln.Addr().String()+"/")
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	stopTasks(errShuttingDown) // task calls end now; tasks/result answers them during the grace
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opt.ShutdownTimeout)
	defer cancel()
	_ = streamable.Shutdown(sctx) // closes its sessions and stops its idle-session sweeper
	sse.CloseSessions()
	done := make(chan error, 1)
	go func() { done <- hs.Shutdown(sctx) }()
	select {
	case err = <-done:
	case <-time.After(shutdownGrace):
		cancelBase()
		err = <-done
	}
	gate.taskCalls.Wait() // cancelled at shutdown's start: they end with their waits
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	return nil
}

// guard checks Host, Origin and the bearer token before any MCP handler runs.
type guard struct {
	live     *liveRequests // the tokens and the requests admitted with them; nil: no token required
	loopback bool
	origins  []string
	log      *slog.Logger
	// selfAuth, when set, routes requests: those it sends to the "/" pattern (the dashboard)
	// skip the bearer check here, because the dashboard applies the token itself.
	selfAuth *http.ServeMux
}

func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.loopback && !isLoopback(hostOnly(r.Host)) {
			// DNS rebinding: a page on a foreign name resolved to 127.0.0.1.
			http.Error(w, "forbidden: Host must name this machine (localhost, 127.0.0.1 or ::1)", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !g.originAllowed(o) && !SameOrigin(o, r.Host) {
			http.Error(w, "forbidden: Origin "+o+" is not allowed (add it to [http] allowed_origins)", http.StatusForbidden)
			return
		}
		if g.live != nil && !g.dashboardPath(r) {
			g.live.admit(w, r, next) // httpauth.go
			return
		}
		next.ServeHTTP(w, r)
	})
}

// dashboardPath reports whether r goes to the dashboard, which checks the token itself.
func (g *guard) dashboardPath(r *http.Request) bool {
	if g.selfAuth == nil {
		return false
	}
	_, pattern := g.selfAuth.Handler(r)
	return pattern == "/"
}

// SameOrigin reports whether origin (an Origin header) names the server the request was sent
// to: an http or https origin whose host:port is the request's Host header (case aside). It
// is the one same-origin rule of the listener's guard and the dashboard's state-changing
// requests. It admits no more than the Host header does: on a loopback listener the guard has
// already required Host to name this machine (DNS rebinding), and on any other one a token is
// required, which a page served from another name holds neither as a header nor as a cookie.
func SameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// originAllowed accepts loopback origins (local tools such as the MCP Inspector) and the
// configured ones; "null" and anything else are refused.
func (g *guard) originAllowed(origin string) bool {
	if slices.Contains(g.origins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopback(u.Hostname())
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}
