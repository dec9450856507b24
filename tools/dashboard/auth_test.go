package dashboard_test

import (
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
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
	require.Contains(t, body, "That token is not one of the server&#39;s")
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
	require.Len(t, c.Value, len("default.")+64, "the token's name and an HMAC-SHA256 in hex")
	require.True(t, strings.HasPrefix(c.Value, "default."), c.Value)
	withCookie := map[string]string{"Cookie": c.Name + "=" + c.Value}

	code, body, _ = f.do(http.MethodGet, "/api/overview", "", withCookie)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"login":true`)
	code, _, _ = f.do(http.MethodGet, "/", "", withCookie)
	require.Equal(t, http.StatusOK, code)
	code, _, _ = f.do(http.MethodGet, "/api/overview", "", map[string]string{"Authorization": "Bearer " + token})
	require.Equal(t, http.StatusOK, code)
	for _, forged := range []string{strings.Repeat("0", 64), "default." + strings.Repeat("0", 64), "other" + c.Value[len("default"):]} {
		code, _, _ = f.do(http.MethodGet, "/api/overview", "", map[string]string{"Cookie": c.Name + "=" + forged})
		require.Equal(t, http.StatusUnauthorized, code, forged)
	}
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

// TestAuth_NamedTokensCookieRevoked: with a token file of named tokens, the login accepts any
// of them and the cookie names its token; once bob's line leaves the file (no restart), bob's
// cookie and bob's bearer header stop working while alice's go on.
func TestAuth_NamedTokensCookieRevoked(t *testing.T) {
	const alice, bob = "alice-dashboard-token-0123", "bob-dashboard-token-456789"
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens")
	write := func(body string) {
		require.NoError(t, os.WriteFile(path+".new", []byte(body), 0o600))
		require.NoError(t, os.Rename(path+".new", path))
	}
	write("alice " + alice + "\nbob " + bob + "\n")
	tokens, err := tools.OpenTokenFile(path, nil)
	require.NoError(t, err)
	st := teststore.OpenAt(t, teststore.LocationIn(dir))
	eng := engine.New(st, engine.Options{DefaultRepository: dir})
	f := serveTokens(t, "127.0.0.1:0", tokens, alice, dir, tools.Deps{Engine: eng, Logs: tools.FileLogs{DataDir: dir}})
	origin := map[string]string{"Origin": f.base, "Content-Type": "application/x-www-form-urlencoded"}
	login := func(token string) map[string]string {
		t.Helper()
		code, body, hdr := f.do(http.MethodPost, "/login", url.Values{"token": {token}}.Encode(), origin)
		require.Equal(t, http.StatusSeeOther, code, body)
		cookies := (&http.Response{Header: hdr}).Cookies()
		require.Len(t, cookies, 1)
		require.NotContains(t, cookies[0].Value, token)
		return map[string]string{"Cookie": cookies[0].Name + "=" + cookies[0].Value}
	}
	aliceCookie, bobCookie := login(alice), login(bob)
	for _, h := range []map[string]string{aliceCookie, bobCookie, {"Authorization": "Bearer " + bob}} {
		code, body, _ := f.do(http.MethodGet, "/api/overview", "", h)
		require.Equal(t, http.StatusOK, code, body)
	}
	write("alice " + alice + "\n")
	for _, h := range []map[string]string{bobCookie, {"Authorization": "Bearer " + bob}} {
		code, _, _ := f.do(http.MethodGet, "/api/overview", "", h)
		require.Equal(t, http.StatusUnauthorized, code, "bob is revoked: %v", h)
	}
	code, _, _ := f.do(http.MethodGet, "/api/overview", "", aliceCookie)
	require.Equal(t, http.StatusOK, code, "alice's cookie goes on")
	code, body, _ := f.do(http.MethodPost, "/login", url.Values{"token": {bob}}.Encode(), origin)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Contains(t, body, "or it was revoked")
}
