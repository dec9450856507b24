package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

var servingAddr = regexp.MustCompile(`serving MCP over HTTP .*?addr=(\S+)`)

// startHTTP runs `serve --http` on a free loopback port and returns its base URL.
func (s *sandbox) startHTTP(extraEnv []string, args ...string) (*proc, string) {
	s.t.Helper()
	p := s.start(extraEnv, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	var addr string
	testenv.WaitFor(s.t, "the HTTP listener", func() bool {
		if m := servingAddr.FindStringSubmatch(p.stderrText()); m != nil {
			addr = m[1]
			return true
		}
		return p.cmd.ProcessState != nil
	})
	require.NotEmpty(s.t, addr, "serve exited: %s", p.stderrText())
	return p, "http://" + addr
}

func httpPost(t *testing.T, url string, header map[string]string) *http.Response {
	t.Helper()
	res := testenv.MCPRequest(t, context.Background(), http.MethodPost, url, initialize, header)
	_ = res.Body.Close()
	return res
}

// TestB29_BinaryHTTP: the built binary answers 401 without the token and 403 for a foreign
// Origin, serves with the token, and stops on SIGTERM.
func TestB29_BinaryHTTP(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p, base := s.startHTTP([]string{EnvToken + "=env-token-123"})
	for _, path := range []string{"/mcp", "/sse"} {
		res := httpPost(t, base+path, nil)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, path)
		require.Contains(t, res.Header.Get("WWW-Authenticate"), "Bearer")
	}
	require.Equal(t, http.StatusForbidden, httpPost(t, base+"/mcp", map[string]string{
		"Authorization": "Bearer env-token-123", "Origin": "http://evil.example"}).StatusCode)
	require.Equal(t, http.StatusOK, httpPost(t, base+"/mcp", map[string]string{"Authorization": "Bearer env-token-123"}).StatusCode)
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, p.wait())
}

// TestB29_RefusesNonLoopbackWithoutToken: serve exits at once (2, a usage mistake, as
// --metrics and --pprof refuse a non-loopback address) with an error naming the ways to set a
// token; nothing listens.
func TestB29_RefusesNonLoopbackWithoutToken(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0"} {
		p := s.start(nil, "serve", "--http", addr)
		require.Equal(t, 2, p.wait(), "a usage mistake, as --metrics 0.0.0.0:P: %s", addr)
		require.Contains(t, p.stderrText(), "refusing to serve HTTP on a non-loopback address without a bearer token")
		require.NotContains(t, p.stderrText(), "serving MCP over HTTP")
		d := s.start(nil, "daemon", "--http", addr)
		require.Equal(t, 2, d.wait(), "daemon as serve: %s", addr)
		require.Contains(t, d.stderrText(), "refusing to serve HTTP on a non-loopback address without a bearer token")
	}
	// With a private token file the same address is served.
	tok := filepath.Join(s.home, "token")
	require.NoError(t, os.WriteFile(tok, []byte("file-token-456\n"), 0o600))
	p, base := s.startHTTP(nil, "--token-file", tok)
	require.Equal(t, http.StatusOK, httpPost(t, base+"/mcp", map[string]string{"Authorization": "Bearer file-token-456"}).StatusCode)
	require.Equal(t, http.StatusUnauthorized, httpPost(t, base+"/mcp", nil).StatusCode)
	p.kill()
	// A token file others can read is refused.
	require.NoError(t, os.Chmod(tok, 0o644))
	p = s.start(nil, "serve", "--http", "127.0.0.1:0", "--token-file", tok)
	require.Equal(t, 1, p.wait())
	require.Contains(t, p.stderrText(), "chmod 600")
}
