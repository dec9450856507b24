package e2e_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSessions_TypeScriptSDK: the official TypeScript SDK client gets a session from
// `serve --http` (2025-11-25), works in it, and ends it with DELETE (terminateSession); the
// ended id then gets 404 with a JSON-RPC error, the same client's next call is refused (400:
// it sends no session any more), and a new client gets a new session and sees the same
// missions.
func TestSessions_TypeScriptSDK(t *testing.T) {
	const token = "sessions-token"
	e := newXEnv(t, xsettings{})
	srv, url := e.startHTTP("serve", "MCP_SCHEDULER_TOKEN="+token)
	a := startSDKClient(t, url, token)
	require.True(t, a.Ready.Ready, a.Ready.ConnectError)
	var sess struct{ SessionID, ProtocolVersion string }
	a.send(map[string]any{"op": "session"})
	a.read(&sess)
	require.True(t, strings.HasPrefix(sess.SessionID, "mcp-session-"), sess.SessionID)
	require.Equal(t, "2025-11-25", sess.ProtocolVersion)
	a.ok("create_mission", map[string]any{"title": "made in a session"}, nil)

	var r struct {
		OK    bool
		Error string
	}
	a.send(map[string]any{"op": "terminate"})
	a.read(&r)
	require.True(t, r.OK, r.Error)
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	require.NoError(t, err)
	for k, v := range map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "Mcp-Session-Id": sess.SessionID, "Mcp-Protocol-Version": "2025-11-25"} {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode, string(body))
	require.Contains(t, string(body), `"code":-32001`)
	require.Contains(t, string(body), "DELETE")

	a.send(map[string]any{"op": "call", "name": "status", "args": map[string]any{}})
	var after toolAnswer
	a.read(&after)
	require.NotEmpty(t, after.ProtocolError, "a call after the session ended is refused")

	b := startSDKClient(t, url, token)
	require.True(t, b.Ready.Ready, b.Ready.ConnectError)
	b.send(map[string]any{"op": "session"})
	var sess2 struct{ SessionID, ProtocolVersion string }
	b.read(&sess2)
	require.NotEqual(t, sess.SessionID, sess2.SessionID)
	got := b.call("list_missions", map[string]any{})
	require.Contains(t, string(got.Structured), "made in a session")
	b.send(map[string]any{"op": "close"})
	require.NoError(t, srv.stop())
}
