package dashboard_test

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// TestAuth_TokenLoginCookie: with a token, pages send the browser to the login page and the
// API answers 401; the login page takes the token and sets an HttpOnly, SameSite=Strict
// cookie that is not the token; the cookie or the bearer header opens the API; a forged
// cookie, a wrong token and a login without Origin are refused; the cookie does not open the
// MCP endpoint, which keeps requiring the bearer header.
func TestAuth_TokenLoginCookie(t *testing.T) {
	const token = "s3cret-token-for-the-dashboard"
	f := start(t, token)
	origin := map[string]string{"Origin": f.base, "Content-Type": "application/x-www-form-urlencoded"}

	code, body, _ := f.do(http.MethodGet, "/api/overview", "", nil)
	require.Equal(t, http.StatusUnauthorized, code, body)
	require.Contains(t, body, "log in at /login")
	code, _, hdr := f.do(http.MethodGet, "/", "", nil)
	require.Equal(t, http.StatusSeeOther, code)
	require.Equal(t, "/login", hdr.Get("Location"))
	code, body, _ = f.do(http.MethodGet, "/login", "", nil)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `name="token"`)

	form := url.Values{"token": {"not-the-token"}}.Encode()
	code, body, hdr = f.do(http.MethodPost, "/login", form, origin)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Contains(t, body, "That token is not the server&#39;s")
	require.Empty(t, hdr.Values("Set-Cookie"))

	good := url.Values{"token": {token}}.Encode()
	code, body, _ = f.do(http.MethodPost, "/login", good, map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	require.Equal(t, http.StatusForbidden, code, "a login without Origin is refused")
	require.Contains(t, body, "Origin header")

	code, _, hdr = f.do(http.MethodPost, "/login", good, origin)
	require.Equal(t, http.StatusSeeOther, code)
	cookies := (&http.Response{Header: hdr}).Cookies()
	require.Len(t, cookies, 1)
	c := cookies[0]
	require.Equal(t, dashboard.CookieName, c.Name)
	require.True(t, c.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, c.SameSite)
	require.NotContains(t, c.Value, token)
	require.Len(t, c.Value, 64, "an HMAC-SHA256 in hex")
	withCookie := map[string]string{"Cookie": c.Name + "=" + c.Value}

	code, body, _ = f.do(http.MethodGet, "/api/overview", "", withCookie)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"login":true`)
	code, _, _ = f.do(http.MethodGet, "/", "", withCookie)
	require.Equal(t, http.StatusOK, code)
	code, _, _ = f.do(http.MethodGet, "/api/overview", "", map[string]string{"Authorization": "Bearer " + token})
	require.Equal(t, http.StatusOK, code)
	forged := strings.Repeat("0", 64)
	code, _, _ = f.do(http.MethodGet, "/api/overview", "", map[string]string{"Cookie": c.Name + "=" + forged})
	require.Equal(t, http.StatusUnauthorized, code)
	code, _, _ = f.do(http.MethodGet, "/api/overview", "", map[string]string{"Cookie": c.Name + "=" + token})
	require.Equal(t, http.StatusUnauthorized, code, "the raw token is not a session")

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	code, _, _ = f.do(http.MethodPost, "/mcp", init, map[string]string{"Cookie": c.Name + "=" + c.Value,
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
	require.Equal(t, http.StatusUnauthorized, code, "the dashboard's cookie does not open the MCP endpoint")
	code, _, _ = f.do(http.MethodGet, "/debug/pprof/", "", withCookie)
	require.Equal(t, http.StatusUnauthorized, code, "nor the runtime profiles")
	code, _, _ = f.do(http.MethodGet, "/debug/pprof/", "", map[string]string{"Authorization": "Bearer " + token})
	require.Equal(t, http.StatusOK, code)
	code, _, _ = f.do(http.MethodGet, "/no-such-page", "", nil)
	require.Equal(t, http.StatusNotFound, code, "an unknown path reveals nothing")

	code, _, hdr = f.do(http.MethodPost, "/logout", "", map[string]string{"Cookie": c.Name + "=" + c.Value, "Origin": f.base})
	require.Equal(t, http.StatusSeeOther, code)
	require.Contains(t, hdr.Get("Set-Cookie"), "Max-Age=0")
}

// TestAuth_OriginRules: a foreign Origin is refused on every path (the listener's guard), a
// state-changing request without Origin or from another local origin is refused by the
// dashboard, and the same origin is served; without a token the loopback dashboard is open.
func TestAuth_OriginRules(t *testing.T) {
	f := start(t, "")
	d := f.voyage()
	a := d.IDs["a"]
	retry := "/api/missions/" + a + "/retry"
	json := map[string]string{"Content-Type": "application/json"}

	code, body, _ := f.do(http.MethodGet, "/api/overview", "", nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"login":false`)
	code, body, _ = f.do(http.MethodGet, "/api/overview", "", map[string]string{"Origin": "https://evil.example"})
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, body, "Origin https://evil.example is not allowed")
	code, body, _ = f.do(http.MethodPost, retry, "{}", json)
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, body, "must carry an Origin header")
	code, body, _ = f.do(http.MethodPost, retry, "{}", map[string]string{"Content-Type": "application/json", "Origin": "http://127.0.0.1:1"})
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, body, "is not this server")
	code, body, _ = f.do(http.MethodPost, retry, "{}", map[string]string{"Content-Type": "application/json", "Origin": f.base})
	require.Equal(t, http.StatusConflict, code, "same origin reaches the engine, which refuses to retry a pending mission")
	require.Contains(t, body, `"error"`)
	code, body, _ = f.do(http.MethodGet, "/", "", map[string]string{"Host": "evil.example"})
	require.Equal(t, http.StatusForbidden, code, "DNS rebinding: a foreign Host name is refused")
	require.Contains(t, body, "Host must name this machine")
}

// TestAuth_SameOriginOverTheNetwork: a dashboard on every interface (with a token) is opened
// from another machine as http://192.0.2.2:PORT. Its own buttons (a POST whose Origin is the
// server's own origin, equal to the Host header, with the session cookie) reach the engine
// without [http] allowed_origins; a POST from another origin stays refused, by the listener's
// guard (the MCP endpoint's rule, the same one) and on the MCP endpoint too.
func TestAuth_SameOriginOverTheNetwork(t *testing.T) {
	const token = "s3cret-token-for-the-lan-dashboard"
	dir := t.TempDir()
	st := teststore.OpenAt(t, teststore.LocationIn(dir))
	eng := engine.New(st, engine.Options{DefaultRepository: dir})
	f := serveOn(t, "0.0.0.0:0", token, dir, tools.Deps{Engine: eng, Logs: tools.FileLogs{DataDir: dir}})
	_, port, err := net.SplitHostPort(strings.TrimPrefix(f.base, "http://"))
	require.NoError(t, err)
	host := net.JoinHostPort("192.0.2.2", port)
	self := "http://" + host
	d := f.voyage()
	retry := "/api/missions/" + d.IDs["a"] + "/retry"

	form := map[string]string{"Host": host, "Origin": self, "Content-Type": "application/x-www-form-urlencoded"}
	code, body, hdr := f.do(http.MethodPost, "/login", url.Values{"token": {token}}.Encode(), form)
	require.Equal(t, http.StatusSeeOther, code, "the login form of the page itself: %s", body)
	cookies := (&http.Response{Header: hdr}).Cookies()
	require.Len(t, cookies, 1)
	session := cookies[0].Name + "=" + cookies[0].Value

	button := map[string]string{"Host": host, "Origin": self, "Cookie": session, "Content-Type": "application/json"}
	code, body, _ = f.do(http.MethodPost, retry, "{}", button)
	require.Equal(t, http.StatusConflict, code, "the page's own button reaches the engine (which refuses to retry a pending mission): %s", body)
	require.NotContains(t, body, "allowed_origins")

	for _, other := range []string{"http://evil.example", "http://192.0.2.2:1", "http://192.0.2.3:" + port, "null"} {
		h := map[string]string{"Host": host, "Origin": other, "Cookie": session, "Content-Type": "application/json"}
		code, body, _ = f.do(http.MethodPost, retry, "{}", h)
		require.Equal(t, http.StatusForbidden, code, "cross-origin %s: %s", other, body)
		require.Contains(t, body, "is not allowed (add it to [http] allowed_origins)", other)
	}
	// The MCP endpoint is behind the same guard: a foreign Origin is refused there too. (Its
	// own answer to the page's origin cannot be shown from here: this test connects over
	// loopback, where the MCP SDK refuses a Host that is not loopback, DNS rebinding.)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	code, body, _ = f.do(http.MethodPost, "/mcp", init, map[string]string{"Host": host, "Origin": "http://evil.example",
		"Authorization": "Bearer " + token, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
	require.Equal(t, http.StatusForbidden, code, body)
	require.Contains(t, body, "is not allowed (add it to [http] allowed_origins)")
}
