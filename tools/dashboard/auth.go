package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

var errNoEngine = errors.New("dashboard: Deps.Engine is required")

// CookieName is the dashboard's session cookie.
const CookieName = "mcp_scheduler_session"

// auth is the dashboard's access rule. Without tokens everything is open (the listener is
// loopback only, like the MCP endpoint). With them, a request needs either a bearer header
// carrying a token in force or the session cookie, whose value is the token's name and an
// HMAC of the token's digest under a key drawn at start (tools.Tokens.Proof): it is not the
// token, it cannot be forged without the key, it stops working when that token is revoked,
// and every session ends when the process does.
type auth struct {
	tokens *tools.Tokens // nil: open
	key    []byte
}

func newAuth(tokens *tools.Tokens) (*auth, error) {
	if tokens == nil {
		return &auth{}, nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("dashboard: session key: %w", err)
	}
	return &auth{tokens: tokens, key: key}, nil
}

// open reports whether no token is configured.
func (a *auth) open() bool { return a.tokens == nil }

// session returns the cookie value that proves a login with the named token ("" once the
// name has no token in force).
func (a *auth) session(name string) string {
	proof, ok := a.tokens.Proof(name, a.key)
	if !ok {
		return ""
	}
	return name + "." + proof
}

// allowed reports whether r carries a token in force or a session cookie of one.
func (a *auth) allowed(r *http.Request) bool {
	if a.open() {
		return true
	}
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		_, err := a.tokens.Authenticate(strings.TrimSpace(tok))
		return err == nil
	}
	c, err := r.Cookie(CookieName)
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(c.Value, '.')
	if i <= 0 {
		return false
	}
	want := a.session(c.Value[:i])
	return want != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(want)) == 1
}

// require wraps an API or page handler with the access rule and, for state-changing methods,
// the same-origin rule.
func (a *auth) require(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.allowed(r) {
			if strings.HasPrefix(r.URL.Path, "/api/") || r.Method != http.MethodGet {
				writeError(w, http.StatusUnauthorized, "unauthorized: log in at /login with the server's token, or send Authorization: Bearer <token>")
				return
			}
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if msg := sameOrigin(r); msg != "" {
				writeError(w, http.StatusForbidden, msg)
				return
			}
		}
		next(w, r)
	})
}

// sameOrigin checks that a state-changing request comes from a page of this server: it must
// carry an Origin header (browsers always send one on POST) naming this very host
// (tools.SameOrigin, the rule the listener's guard applies too). The listener's guard has
// already refused foreign origins; this also refuses a missing Origin
// and other local origins (another program's page on a loopback port). It returns the refusal,
// or "" when the request may go on.
func sameOrigin(r *http.Request) string {
	o := r.Header.Get("Origin")
	if o == "" {
		return "forbidden: a state-changing request must carry an Origin header naming this server (send it from the dashboard page)"
	}
	if !tools.SameOrigin(o, r.Host) {
		return "forbidden: Origin " + o + " is not this server (http://" + r.Host + "); act from the dashboard page itself"
	}
	return ""
}

func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	if h.auth.open() {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	writeLogin(w, http.StatusOK, "")
}

// login takes the token from the form and sets the session cookie: HttpOnly (no script reads
// it), SameSite=Strict (no other site's page sends it), Secure when served over TLS.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if msg := sameOrigin(r); msg != "" {
		writeLogin(w, http.StatusForbidden, msg)
		return
	}
	if h.auth.open() {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	tok := strings.TrimSpace(r.PostFormValue("token"))
	name, err := "", errors.New("no token was given")
	if tok != "" {
		name, err = h.auth.tokens.Authenticate(tok)
	}
	cookie := ""
	if err == nil {
		cookie = h.auth.session(name)
	}
	if cookie == "" {
		h.log.Warn("dashboard login refused", "remote", r.RemoteAddr, "why", err)
		writeLogin(w, http.StatusUnauthorized, "That token is not one of the server's (or it was revoked). Use the value of --token, $MCP_SCHEDULER_TOKEN or a line of the [http] token_file.")
		return
	}
	h.log.Info("dashboard login", "remote", r.RemoteAddr, "token_name", name)
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: cookie, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
