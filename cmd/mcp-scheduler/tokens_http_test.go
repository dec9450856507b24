package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

const (
	aliceToken = "alice-token-0123456789abcdef"
	bobToken   = "bob-token-fedcba9876543210"
)

// writeTokenFile replaces path with body (mode 0600) the way an operator should: a new file
// renamed over the old one.
func writeTokenFile(t *testing.T, path, body string) {
	t.Helper()
	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, []byte(body), 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// tokenClient is an mcp-go client over Streamable HTTP sending token.
func tokenClient(t *testing.T, ctx context.Context, base, token string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	require.NoError(t, err)
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { _ = c.Close() })
	var ir mcp.InitializeRequest
	ir.Params.ClientInfo = mcp.Implementation{Name: "tokens-test", Version: "0"}
	ir.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION // a session, to hold a GET stream on
	_, err = c.Initialize(ctx, ir)
	require.NoError(t, err)
	return c
}

// callJSON calls a tool and returns its structured result as JSON (an isError result fails).
func callJSON(t *testing.T, ctx context.Context, c *client.Client, name string, args map[string]any) string {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err, name)
	require.False(t, res.IsError, "%s: %v", name, res.Content)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	return string(raw)
}

// openStream opens the standalone GET stream of a session with token and returns a channel
// closed when the server ends it.
func openStream(t *testing.T, ctx context.Context, base, token, sid string) <-chan struct{} {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/mcp", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_, _ = io.Copy(io.Discard, res.Body) // until the server ends the stream (or ctx does)
		_ = res.Body.Close()
	}()
	return ended
}

// TestTokens_NamedFileOverStreamableHTTP: serve --http with a token file of two named
// tokens: both work over a real MCP client; a claim made with alice's token records alice
// beside the claim's agent_id (get_mission's run, missions show's lease line); removing
// bob's line, with no restart, ends bob's open GET stream and refuses bob's next request
// with 401 saying the token was revoked (never echoing it), while alice keeps working;
// doctor names both tokens and shows neither value.
func TestTokens_NamedFileOverStreamableHTTP(t *testing.T) {
	s := newSandbox(t)
	tok := filepath.Join(s.home, "tokens")
	writeTokenFile(t, tok, "# agents of the team\nalice "+aliceToken+"\n\nbob   "+bobToken+"\n")
	p, base := s.startHTTP(nil, "--token-file", tok)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	alice := tokenClient(t, ctx, base, aliceToken)
	bob := tokenClient(t, ctx, base, bobToken)

	created := callJSON(t, ctx, bob, "create_mission", map[string]any{"title": "named tokens", "brief": "claimed in pull mode"})
	var cm struct {
		Mission struct {
			ID string `json:"id"`
		} `json:"mission"`
	}
	require.NoError(t, json.Unmarshal([]byte(created), &cm))
	claimed := callJSON(t, ctx, alice, "claim_mission", map[string]any{"agent_id": "worker-7"})
	require.Contains(t, claimed, `"claimed":true`, claimed)

	got := callJSON(t, ctx, bob, "get_mission", map[string]any{"mission_id": cm.Mission.ID})
	var gm struct {
		Mission struct {
			Lease struct {
				Owner string `json:"owner"`
			} `json:"lease"`
			Run struct {
				Agent           string `json:"agent"`
				AuthenticatedBy string `json:"authenticated_by"`
			} `json:"run"`
		} `json:"mission"`
	}
	require.NoError(t, json.Unmarshal([]byte(got), &gm), got)
	require.Equal(t, "worker-7", gm.Mission.Lease.Owner, "the claim's agent_id owns the lease")
	require.Equal(t, "worker-7", gm.Mission.Run.Agent)
	require.Equal(t, "alice", gm.Mission.Run.AuthenticatedBy, "the token's name is recorded beside it: %s", got)
	out, errs, code := s.cli("missions", "show", cm.Mission.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "lease       worker-7 (token alice), epoch")

	list := `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`
	inBobs := func(token string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": bob.GetSessionId(), "Mcp-Protocol-Version": mcp.LATEST_LEGACY_PROTOCOL_VERSION}
	}
	code, _, body := rawHTTP(t, http.MethodPost, base+"/mcp", list, inBobs(aliceToken))
	require.Equal(t, http.StatusForbidden, code, "a session belongs to its token: %s", body)
	require.Contains(t, body, "started with another bearer token")

	stream := openStream(t, ctx, base, bobToken, bob.GetSessionId())
	writeTokenFile(t, tok, "alice "+aliceToken+"\n")
	testenv.Receive(t, "bob's open GET stream to end when his token is revoked", stream)
	code, _, body = rawHTTP(t, http.MethodPost, base+"/mcp", list, inBobs(bobToken))
	require.Equal(t, http.StatusUnauthorized, code, body)
	require.Contains(t, body, "was revoked")
	require.NotContains(t, body, bobToken)
	code, _, body = rawHTTP(t, http.MethodPost, base+"/mcp", list, inBobs(aliceToken))
	require.Equal(t, http.StatusNotFound, code, "bob's session ended with his token: %s", body)
	require.Contains(t, body, "its bearer token was revoked")
	var req mcp.CallToolRequest
	req.Params.Name = "status"
	_, err := bob.CallTool(ctx, req)
	require.Error(t, err, "bob's client is refused too")
	require.Contains(t, callJSON(t, ctx, alice, "status", nil), `"total":1`, "alice keeps working, same session, no restart")
	code, _, body = rawHTTP(t, http.MethodPost, base+"/mcp", initialize, map[string]string{"Authorization": "Bearer not-a-token-of-this-server"})
	require.Equal(t, http.StatusUnauthorized, code)
	require.Contains(t, body, "not one of the server's")

	writeTokenFile(t, tok, "alice "+aliceToken+"\nbob "+bobToken+"\n")
	require.Equal(t, http.StatusOK, httpPost(t, base+"/mcp", map[string]string{"Authorization": "Bearer " + bobToken}).StatusCode,
		"a line put back admits its token again, still without a restart")
	require.NotContains(t, p.stderrText(), bobToken, "no token in the log")
	require.NotContains(t, p.stderrText(), aliceToken)
	require.Contains(t, p.stderrText(), "revoked=[bob]")

	s.env = append(s.env, EnvTokenFile+"="+tok)
	out, _, _ = s.cli("doctor")
	require.Contains(t, out, "http tokens")
	require.Contains(t, out, "2 from "+tok+": alice, bob")
	require.NotContains(t, out, aliceToken)
	require.NotContains(t, out, bobToken)
}

// TestTokens_BadFilesRefusedAtStart: serve refuses a token file that does not validate with
// exit 1 and a message naming the file, the line and what to do (never a token); the
// one-token file of earlier versions still works, its token named default.
func TestTokens_BadFilesRefusedAtStart(t *testing.T) {
	s := newSandbox(t)
	tok := filepath.Join(s.home, "tokens")
	for body, want := range map[string]string{
		"alice " + aliceToken + "\nalice " + bobToken + "\n": tok + ", line 2: the name \"alice\" is used again (first on line 1)",
		"alice " + aliceToken + "\nbob " + aliceToken + "\n": tok + ", line 2: the token of \"bob\" is the same as the one on line 1",
		"alice short\n":                         tok + ", line 1: the token of \"alice\" is 5 characters long; use at least 16",
		"alice " + aliceToken + "\n" + bobToken: tok + ", line 2: holds one word but the file holds several tokens",
		"# nothing yet\n":                       tok + ": is empty (or holds only comments)",
		"al/ice " + aliceToken + "\n":           tok + ", line 1: \"al/ice\" is not a token name",
	} {
		writeTokenFile(t, tok, body)
		p := s.start(nil, "serve", "--http", "127.0.0.1:0", "--token-file", tok)
		require.Equal(t, 1, p.wait(), body)
		require.Contains(t, p.stderrText(), "http.token_file")
		require.Contains(t, p.stderrText(), want)
		require.NotContains(t, p.stderrText(), aliceToken)
		require.NotContains(t, p.stderrText(), bobToken)
	}
	writeTokenFile(t, tok, "  one-bare-token-of-old  \n")
	p, base := s.startHTTP(nil, "--token-file", tok)
	require.Equal(t, http.StatusOK, httpPost(t, base+"/mcp", map[string]string{"Authorization": "Bearer one-bare-token-of-old"}).StatusCode)
	require.Equal(t, http.StatusUnauthorized, httpPost(t, base+"/mcp", nil).StatusCode)
	p.kill()
	s.env = append(s.env, EnvTokenFile+"="+tok)
	out, _, _ := s.cli("doctor")
	require.Contains(t, out, "1 from "+tok+": default")
	require.False(t, strings.Contains(out, "one-bare-token-of-old"))
}
