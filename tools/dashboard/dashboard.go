// Package dashboard is the web dashboard served at / on the HTTP listener of serve --http (and
// daemon --http): pages for voyages (the graph), missions, escalations and agents with the
// landing queue, a JSON API they read, actions that call the same engine operations as the MCP
// tools, and a server-sent event stream fed by the engine's change hub. Every asset is embedded
// (go:embed), so the binary needs no network and no npm. docs/dashboard.md describes it.
package dashboard

import (
	"log/slog"
	"net/http"

	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// Actor is who the engine records for actions taken from the dashboard.
const Actor = "dashboard"

// Options configure a Handler.
type Options struct {
	// Deps are the tools' services: Engine (required) for every read and action, Logs for the
	// live output tail, Workspaces for the diff (either nil: that part says it is not
	// available).
	Deps tools.Deps
	// Token is the bearer token of the HTTP listener ("" for none: the listener is loopback
	// only and the dashboard is open like the MCP endpoint). With a token, pages need the
	// session cookie the login page sets, or the bearer header.
	Token string
	// Tokens, when set, replaces Token: the listener's named tokens (tools.Tokens). The login
	// accepts any token in force, and a session cookie stops working once its token is
	// revoked (its line left the token file).
	Tokens *tools.Tokens
	// Logger receives the dashboard's own records (nil: discarded).
	Logger *slog.Logger
}

// Handler is the dashboard: an http.Handler for every path the MCP transports do not serve.
// It enforces its own access rule (cookie or bearer) because browsers cannot send a bearer
// header on page loads; the listener's guard still checks Host and Origin first.
type Handler struct {
	deps tools.Deps
	auth *auth
	log  *slog.Logger
	mux  *http.ServeMux
}

// New returns the dashboard over opt.Deps. It fails only when no engine is given or the
// process cannot draw a random session key.
func New(opt Options) (*Handler, error) {
	if opt.Deps.Engine == nil {
		return nil, errNoEngine
	}
	tokens := opt.Tokens
	if tokens == nil {
		tokens = tools.FixedToken(opt.Token)
	}
	a, err := newAuth(tokens)
	if err != nil {
		return nil, err
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{deps: opt.Deps, auth: a, log: log, mux: http.NewServeMux()}
	h.routes()
	return h, nil
}

func (h *Handler) routes() {
	h.mux.HandleFunc("GET /login", h.loginPage)
	h.mux.HandleFunc("POST /login", h.login)
	h.mux.Handle("GET /assets/", h.assets())
	h.mux.HandleFunc("GET /assets/hidden.js", h.hiddenAsset)
	authed := func(pattern string, fn http.HandlerFunc) { h.mux.Handle(pattern, h.auth.require(fn)) }
	authed("GET /{$}", h.index)
	authed("POST /logout", h.logout)
	authed("GET /api/overview", h.overview)
	authed("GET /api/voyages", h.voyages)
	authed("GET /api/voyages/{id}", h.voyage)
	authed("GET /api/missions", h.looseMissions)
	authed("GET /api/missions/{id}", h.mission)
	authed("GET /api/missions/{id}/log", h.missionLog)
	authed("GET /api/missions/{id}/diff", h.missionDiff)
	authed("GET /api/escalations", h.escalations)
	authed("GET /api/agents", h.agents)
	authed("GET /api/events", h.events)
	authed("POST /api/escalations/{id}/resolve", h.resolve)
	authed("POST /api/missions/{id}/retry", h.retry)
	authed("POST /api/missions/{id}/skip", h.skip)
	authed("POST /api/missions/{id}/approve-landing", h.approveLanding)
	authed("POST /api/missions/{id}/budget", h.missionBudget)
	authed("POST /api/voyages/{id}/budget", h.voyageBudget)
}

// ServeHTTP serves the dashboard.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "same-origin") // not no-referrer: with it, browsers send "Origin: null" on form posts
	w.Header().Set("Content-Security-Policy", csp)
	h.mux.ServeHTTP(w, r)
}

// csp allows only this origin: no third-party script, style, image or connection.
const csp = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
