package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServe_ResourceAndPromptErrorCodes: through the binary on stdio, a resources/read of a
// malformed or unknown id answers -32002 naming the URI and where ids come from, and a
// prompts/get without its required argument -32602 naming the argument as sent
// (docs/error-handling.md, "Resources and prompts"); mcp-go alone answered -32603 to both.
func TestServe_ResourceAndPromptErrorCodes(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.start(nil, "serve")
	p.send(initialize)
	parseRPC(t, p.next())
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"mission://msn_nope"}}`)
	p.send(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"mission://msn_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D/log"}}`)
	p.send(`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"plan_voyage","arguments":{}}}`)
	got := map[string]rpc{}
	for len(got) < 3 {
		m := parseRPC(t, p.next())
		if m.ID != nil {
			got[string(m.ID)] = m
		}
	}
	for id, want := range map[string]struct {
		code int
		says string
	}{
		"2": {-32002, "resource not found: mission://msn_nope"},
		"3": {-32002, "no mission has this id"},
		"4": {-32602, `prompt argument "goal" is required`},
	} {
		e := got[id].Error
		require.NotNil(t, e, "request %s: %s", id, got[id].Result)
		require.Equal(t, want.code, e.Code, "request %s: %s", id, e.Message)
		require.Contains(t, e.Message, want.says, "request %s", id)
	}
	require.Contains(t, got["2"].Error.Message, "list_missions", "says where ids come from")
	require.NoError(t, p.stdin.Close())
	require.Equal(t, 0, p.wait())
}
