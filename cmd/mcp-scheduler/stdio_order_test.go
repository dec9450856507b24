package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// stdioDispatch is a dispatch of one mission that waits wait seconds, with a progress token.
func stdioDispatch(id, wait int, token string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
		"name": "dispatch", "_meta": map[string]any{"progressToken": token},
		"arguments": map[string]any{"title": "order", "wait_seconds": wait, "missions": []map[string]any{{"key": "a", "title": "waits"}}}}})
	return string(b)
}

// TestStdio_ProgressOnlyAfterInitializeAndBeforeResult: on the built binary's stdio, a call
// made before initialize gets its answer and no notification (as mcp-go's own notification
// path, which the server bypasses to keep order, docs/mcp.md "Streams"); after initialize a
// waiting dispatch with a progress token reports its progress first and its result last.
// (TestStdio_ProgressBeforeResult in tools drives many calls at once; this one needs a
// fresh process, since mcp-go keeps the stdio session's state in a package variable.)
func TestStdio_ProgressOnlyAfterInitializeAndBeforeResult(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.start(nil, "serve")
	p.send(stdioDispatch(7, 1, "early"))
	m := parseRPC(t, p.next())
	require.Equal(t, "7", string(m.ID), "the answer comes first: no progress before initialize")

	p.send(initialize)
	require.Nil(t, parseRPC(t, p.next()).Error)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(stdioDispatch(8, 1, "late"))
	var progress int
	for {
		line := p.next()
		m := parseRPC(t, line)
		if m.Method == "notifications/progress" {
			require.Contains(t, line, `"progressToken":"late"`)
			progress++
			continue
		}
		require.Equal(t, "8", string(m.ID), line)
		require.Nil(t, m.Error, line)
		break
	}
	require.GreaterOrEqual(t, progress, 1, "the dispatch's first state is reported before its result")
	require.NoError(t, p.stdin.Close())
	require.Equal(t, 0, p.wait())
}
