package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// rawStdio is a raw JSON-RPC client of ServeStdio over two OS pipes: it writes lines and
// reads every line the server writes, in the order the server wrote them.
type rawStdio struct {
	t     *testing.T
	in    *os.File    // the server's stdin, client side
	lines chan string // the server's stdout, line by line; closed at its end
}

func newRawStdio(t *testing.T, ctx context.Context, srv *Server) *rawStdio {
	t.Helper()
	srvIn, cliOut, err := os.Pipe()
	require.NoError(t, err)
	cliIn, srvOut, err := os.Pipe()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(ctx)
	r := &rawStdio{t: t, in: cliOut, lines: make(chan string, 1<<16)}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.ServeStdio(ctx, srvIn, srvOut) })
	wg.Go(func() {
		defer close(r.lines)
		sc := bufio.NewScanner(cliIn)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
	})
	t.Cleanup(func() {
		cancel()
		_ = cliOut.Close()
		_ = srvOut.Close() // ends the reader once the server has stopped writing
		_ = srvIn.Close()
		_ = cliIn.Close()
		wg.Wait()
	})
	return r
}

func (r *rawStdio) send(line string) {
	r.t.Helper()
	_, err := io.WriteString(r.in, line+"\n")
	require.NoError(r.t, err)
}

// next returns the next line the server wrote.
func (r *rawStdio) next() string {
	r.t.Helper()
	l, ok := testenv.Receive(r.t, "a line from the server", r.lines)
	require.True(r.t, ok, "the server's stdout ended")
	return l
}

// TestStdio_ProgressBeforeResult: on stdio, every progress notification of a call comes
// before the call's result and in the order it was sent (progress growing). Many waiting
// dispatch calls with progress tokens run at once (mcp-go serves five tool calls at a time),
// each repeating its progress every 2 ms right up to its return, so a notification sent just
// before the result is the common case, not a rare one. Under mcp-go v1.2.1's own routing
// (notifications through the session channel and a second writer goroutine) progress came
// after its result; see docs/mcp.md, "Streams".
func TestStdio_ProgressBeforeResult(t *testing.T) {
	b := setup(t, setupOpts{waitProgress: 2 * time.Millisecond})
	c := newRawStdio(t, b.ctx, b.srv)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	var m rpcMessage
	require.NoError(t, json.Unmarshal([]byte(c.next()), &m))
	require.JSONEq(t, "1", string(m.ID))
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	const calls = 30
	for i := range calls {
		id := 100 + i
		c.send(dispatchBody(id, 1, "tok-"+strconv.Itoa(id)))
	}
	last := map[string]float64{} // progress token → the last progress seen
	done := map[string]bool{}    // id → its result came
	for len(done) < calls {
		line := c.next()
		var m rpcMessage
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		switch {
		case m.Method == "notifications/progress":
			tok, ok := m.Params.ProgressToken.(string)
			require.True(t, ok, "a string progress token: %s", line)
			id := tok[len("tok-"):]
			require.False(t, done[id], "progress of call %s after its result: %s", id, line)
			if p, seen := last[tok]; seen {
				require.Greater(t, m.Params.Progress, p, "progress of call %s in the order sent: %s", id, line)
			}
			last[tok] = m.Params.Progress
		case m.Result != nil:
			id := string(m.ID)
			require.False(t, done[id], "one result per call: %s", line)
			done[id] = true
		default:
			t.Fatalf("unexpected line on stdout: %s", line)
		}
	}
	for i := range calls {
		tok := fmt.Sprintf("tok-%d", 100+i)
		require.Contains(t, last, tok, "call %d reported its progress", 100+i)
	}
}
