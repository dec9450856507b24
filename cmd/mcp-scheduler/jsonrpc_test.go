package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// jsonrpcCase is one line sent to the server and the answer expected: the id as it must come
// back (raw JSON) and the error code (0: a result).
type jsonrpcCase struct {
	name, line, id string
	code           int
}

// jsonrpcCases are the JSON-RPC edge cases of docs/mcp.md ("JSON-RPC"), shared by the
// stdio and HTTP tests.
func jsonrpcCases() []jsonrpcCase {
	deep := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`
	return []jsonrpcCase{
		{"not JSON", `this is not JSON`, "null", -32700},
		{"truncated", `{"jsonrpc":"2.0","id":2,`, "null", -32700},
		{"nested too deeply", deep, "null", -32700},
		{"batch", `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, "null", -32600},
		{"empty batch", `[]`, "null", -32600},
		{"not an object", `"ping"`, "null", -32600},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, "null", -32600},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "null", -32600},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, "null", -32600},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, "null", -32600},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "null", -32600},
		{"id beyond 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, "null", -32600},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":12,"method":"ping"}`, "12", -32600},
		{"no jsonrpc", `{"id":13,"method":"ping"}`, "13", -32600},
		{"method not a string", `{"jsonrpc":"2.0","id":14,"method":5}`, "14", -32600},
		{"id without method, result or error", `{"jsonrpc":"2.0","id":15}`, "15", -32600},
		{"string id", `{"jsonrpc":"2.0","id":"16","method":"ping"}`, `"16"`, 0},
		{"number id", `{"jsonrpc":"2.0","id":17,"method":"ping"}`, "17", 0},
		{"negative id", `{"jsonrpc":"2.0","id":-18,"method":"ping"}`, "-18", 0},
		{"empty string id", `{"jsonrpc":"2.0","id":"","method":"ping"}`, `""`, 0},
		{"largest safe id", `{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`, "9007199254740991", 0},
	}
}

// TestStdio_JSONRPCEdges: on stdio every malformed line gets its JSON-RPC error (-32700 with
// id null when it cannot be parsed, -32600 when it is not a valid message, with the id when
// the id is valid), ids come back with their JSON type, notifications get nothing, a line
// over the 64 MiB cap gets -32700, and the server goes on answering after each.
func TestStdio_JSONRPCEdges(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.start(nil, "serve")
	p.send(initialize)
	require.Nil(t, parseRPC(t, p.next()).Error)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, c := range jsonrpcCases() {
		p.send(c.line)
		m := parseRPC(t, p.next())
		require.Equal(t, c.id, string(m.ID), c.name)
		if c.code == 0 {
			require.Nil(t, m.Error, c.name)
			continue
		}
		require.NotNil(t, m.Error, c.name)
		require.Equal(t, c.code, m.Error.Code, "%s: %s", c.name, m.Error.Message)
		require.NotEmpty(t, m.Error.Message, c.name)
	}
	// Notifications, known or not, valid or carrying odd params, get no reply: the next line
	// on stdout answers the ping sent after them.
	p.send(`{"jsonrpc":"2.0","method":"notifications/whatever"}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":424242}}`)
	p.send(`{"jsonrpc":"2.0","id":99,"method":"ping"}`)
	require.Equal(t, "99", string(parseRPC(t, p.next()).ID))
	// A line over the cap cannot be parsed: -32700, and the next line is read.
	p.sendRaw(`{"jsonrpc":"2.0","id":100,"method":"ping","params":{"x":"` + strings.Repeat("x", 64<<20) + `"}}` + "\n")
	m := parseRPC(t, p.next())
	require.Equal(t, "null", string(m.ID))
	require.Equal(t, -32700, m.Error.Code)
	require.Contains(t, m.Error.Message, "64 MiB")
	p.send(`{"jsonrpc":"2.0","id":101,"method":"ping"}`)
	require.Equal(t, "101", string(parseRPC(t, p.next()).ID))
	require.NoError(t, p.stdin.Close())
	require.Equal(t, 0, p.wait())
	require.Contains(t, p.stderrText(), "refused a message on stdin")
}

// TestStdio_InitializeVersions: initialize negotiates the version the client names when it
// is a session-based revision the server implements, else (missing, unknown, or the
// stateless 2026-07-28, which has no initialize) the latest session-based one, 2025-11-25.
func TestStdio_InitializeVersions(t *testing.T) {
	t.Parallel()
	for asked, want := range map[string]string{
		``:                                "2025-11-25",
		`"protocolVersion":"1999-01-01",`: "2025-11-25",
		`"protocolVersion":"2026-07-28",`: "2025-11-25",
		`"protocolVersion":"2025-06-18",`: "2025-06-18",
		`"protocolVersion":"2024-11-05",`: "2024-11-05",
		`"protocolVersion":"2025-11-25",`: "2025-11-25",
	} {
		s := newSandbox(t)
		p := s.start(nil, "serve")
		p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{` + asked + `"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
		m := parseRPC(t, p.next())
		require.Nil(t, m.Error, asked)
		require.Contains(t, string(m.Result), `"protocolVersion":"`+want+`"`, asked)
		require.NoError(t, p.stdin.Close())
		require.Equal(t, 0, p.wait())
	}
}
