package main

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

var pprofAddr = regexp.MustCompile(`serving pprof .*?addr=(\S+)`)

// TestServe_PprofFlagLoopbackOnly: `serve --pprof` with an address that is not loopback is
// refused before anything starts, naming the flag; on 127.0.0.1 the stdio server serves
// profiles on the side while stdout still carries only JSON-RPC.
func TestServe_PprofFlagLoopbackOnly(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:6060"} {
		p := s.start(nil, "serve", "--pprof", addr)
		require.NotEqual(t, 0, p.wait(), addr)
		require.Contains(t, p.stderrText(), "--pprof must be a loopback address", addr)
		require.NotContains(t, p.stderrText(), "mcp-scheduler serving", addr)
	}
	p := s.start(nil, "serve", "--pprof", "127.0.0.1:0")
	var addr string
	testenv.WaitFor(t, "the pprof listener", func() bool {
		if m := pprofAddr.FindStringSubmatch(p.stderrText()); m != nil {
			addr = m[1]
			return true
		}
		return p.cmd.ProcessState != nil
	})
	require.NotEmpty(t, addr, "serve exited: %s", p.stderrText())
	p.send(initialize)
	require.Nil(t, parseRPC(t, p.next()).Error)
	res, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, string(body), "heap profile:")
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, 0, p.wait())
}
