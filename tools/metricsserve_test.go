package tools

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// metricsStub stands for the Prometheus handler (tools/metrics): the listener's rules do not
// depend on what it serves.
var metricsStub = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	_, _ = w.Write([]byte("# TYPE up gauge\nup 1\n"))
})

// TestMetrics_HTTPListenerBehindToken: /metrics on the MCP listener answers 401 without the
// token and 403 for a foreign Origin, like /mcp, and serves with it; without a handler in
// the options nothing is mounted there.
func TestMetrics_HTTPListenerBehindToken(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{Token: testToken, Metrics: metricsStub})
	code, _ := get(t, base+PathMetrics, nil)
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = get(t, base+PathMetrics, map[string]string{"Authorization": "Bearer wrong"})
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = get(t, base+PathMetrics, map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://evil.example"})
	require.Equal(t, http.StatusForbidden, code)
	code, body := get(t, base+PathMetrics, map[string]string{"Authorization": "Bearer " + testToken})
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "up 1")

	b2 := setup(t, setupOpts{})
	base2, _ := httpServer(t, b2, HTTPOptions{Token: testToken})
	code, _ = get(t, base2+PathMetrics, map[string]string{"Authorization": "Bearer " + testToken})
	require.Equal(t, http.StatusNotFound, code)
}

// TestMetrics_StandaloneLoopbackOnly: ServeMetrics refuses any address that is not loopback
// before listening, naming the flag; on 127.0.0.1 it serves without a token, refuses a
// foreign Host (DNS rebinding) or Origin, and stops with its context.
func TestMetrics_StandaloneLoopbackOnly(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:0", "nonsense"} {
		err := ServeMetrics(t.Context(), addr, metricsStub, log, func(net.Addr) { t.Errorf("%s: listened", addr) })
		require.Error(t, err, addr)
		require.Contains(t, err.Error(), "--metrics", addr)
		if addr != "nonsense" {
			require.True(t, errors.Is(err, ErrMetricsNotLoopback), addr)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- ServeMetrics(ctx, "127.0.0.1:0", metricsStub, log, func(a net.Addr) { addrc <- a }) }()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-errc:
		t.Fatalf("ServeMetrics: %v", err)
	}
	base := "http://" + addr.String()
	code, body := get(t, base+PathMetrics, nil)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "up 1")
	code, _ = get(t, base+PathMetrics, map[string]string{"Host": "attacker.example"})
	require.Equal(t, http.StatusForbidden, code)
	code, _ = get(t, base+PathMetrics, map[string]string{"Origin": "http://evil.example"})
	require.Equal(t, http.StatusForbidden, code)
	code, _ = get(t, base+PathPprof, nil)
	require.Equal(t, http.StatusNotFound, code, "only /metrics is served there")
	cancel()
	require.NoError(t, <-errc)
}
