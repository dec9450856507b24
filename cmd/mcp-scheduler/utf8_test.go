package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Invalid UTF-8 bytes in a tool call over the real stdio transport are refused naming the
// argument; the session goes on, and nothing was created.
func TestStdio_InvalidUTF8RefusedNamingTheField(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.start(nil, "serve")
	p.send(initialize)
	require.Nil(t, parseRPC(t, p.next()).Error)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"ok","brief":"na` + "\xefve" + `"}}}`)
	m := parseRPC(t, p.next())
	require.JSONEq(t, "2", string(m.ID))
	require.NotNil(t, m.Error)
	require.Contains(t, m.Error.Message, "invalid argument: arguments.brief: is not valid UTF-8 (byte 0xef at offset")

	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_missions","arguments":{}}}`)
	m = parseRPC(t, p.next())
	require.Nil(t, m.Error)
	var res struct {
		StructuredContent struct {
			Missions []json.RawMessage `json:"missions"`
		} `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &res))
	require.Empty(t, res.StructuredContent.Missions, "the refused call created nothing")
	require.NoError(t, p.stdin.Close())
	require.Equal(t, 0, p.wait())
	require.True(t, strings.Contains(p.stderrText(), "refused a request with invalid UTF-8"), "logged: %s", p.stderrText())
}
