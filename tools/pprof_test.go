package tools

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func get(t *testing.T, url string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// TestPprof_HTTPListenerBehindToken: /debug/pprof/ on the MCP listener answers 401 without
// the token (and 403 for a foreign Origin) like /mcp, and serves the index and a heap
// profile with it.
func TestPprof_HTTPListenerBehindToken(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{Token: testToken})
	for _, path := range []string{PathPprof, PathPprof + "heap", PathPprof + "cmdline"} {
		code, _ := get(t, base+path, nil)
		require.Equal(t, http.StatusUnauthorized, code, path)
		code, _ = get(t, base+path, map[string]string{"Authorization": "Bearer wrong"})
		require.Equal(t, http.StatusUnauthorized, code, path)
	}
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	code, _ := get(t, base+PathPprof, map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://evil.example"})
	require.Equal(t, http.StatusForbidden, code)
	code, body := get(t, base+PathPprof, auth)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "heap")
	code, body = get(t, base+PathPprof+"heap?debug=1", auth)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "heap profile:")
}

// TestPprof_StandaloneLoopbackOnly: ServePprof refuses any address that is not loopback
// before listening, naming the flag; on 127.0.0.1 it serves profiles, refuses a foreign Host
// (DNS rebinding) and stops with its context.
func TestPprof_StandaloneLoopbackOnly(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:0", "nonsense"} {
		err := ServePprof(t.Context(), addr, log, func(net.Addr) { t.Errorf("%s: listened", addr) })
		require.Error(t, err, addr)
		require.Contains(t, err.Error(), "--pprof", addr)
		if addr != "nonsense" {
			require.True(t, errors.Is(err, ErrPprofNotLoopback), addr)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- ServePprof(ctx, "127.0.0.1:0", log, func(a net.Addr) { addrc <- a }) }()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-errc:
		t.Fatalf("ServePprof: %v", err)
	}
	base := "http://" + addr.String()
	code, body := get(t, base+PathPprof+"goroutine?debug=1", nil)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "goroutine profile:")
	code, _ = get(t, base+PathPprof, map[string]string{"Host": "attacker.example"})
	require.Equal(t, http.StatusForbidden, code)
	cancel()
	require.NoError(t, <-errc)
}
