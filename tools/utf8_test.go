package tools

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// readRPC reads one JSON-RPC response from a Streamable HTTP answer (JSON or one SSE event).
func readRPC(t *testing.T, res *http.Response) rpcReply {
	t.Helper()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	text := string(body)
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		for _, l := range strings.Split(text, "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				text = d
			}
		}
	}
	var r rpcReply
	require.NoError(t, json.Unmarshal([]byte(text), &r), "%s", body)
	return r
}

type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Invalid UTF-8 in a tool's arguments, sent as real bytes over Streamable HTTP, is refused
// naming the argument; nothing is created, and the same call in valid UTF-8 then works.
func TestHTTP_InvalidUTF8ArgumentsRefusedNamingTheField(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{})
	res := post(t, base+PathMCP, initBody, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	h := map[string]string{"Mcp-Session-Id": res.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
	post(t, base+PathMCP, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)

	for field, call := range map[string]string{
		"arguments.title":                   `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"caf` + "\xe9" + `"}}}`,
		"arguments.missions[1].brief":       `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"dispatch","arguments":{"title":"v","missions":[{"key":"a","title":"a"},{"key":"b","title":"b","brief":"x` + "\xff\xfe" + `"}]}}}`,
		"arguments.model_policy.allowed[0]": `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"t","model_policy":{"allowed":["gpt` + "\xc3" + `"]}}}}`,
		"arguments.acceptance_criteria[0]":  `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"t","acceptance_criteria":["` + "\x80" + `"]}}}`,
	} {
		r := readRPC(t, post(t, base+PathMCP, call, h))
		require.JSONEq(t, "7", string(r.ID))
		require.NotNil(t, r.Error, "refused before the tool runs: %+v", r.Result)
		require.Contains(t, r.Error.Message, "invalid argument: "+field+": is not valid UTF-8", field)
		require.Contains(t, r.Error.Message, "send text as UTF-8")
	}
	r := readRPC(t, post(t, base+PathMCP, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"half \ud83d"}}}`, h))
	require.NotNil(t, r.Error, "a lone surrogate escape would decode to U+FFFD just the same")
	require.Contains(t, r.Error.Message, "invalid argument: arguments.title: is not valid UTF-8 (a lone UTF-16 surrogate escape")
	all, err := b.eng.ListMissions(b.ctx, engine.MissionFilter{})
	require.NoError(t, err)
	require.Empty(t, all, "nothing was created, not even with U+FFFD in place of the bytes")

	r = readRPC(t, post(t, base+PathMCP, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"create_mission","arguments":{"title":"café"}}}`, h))
	require.Nil(t, r.Error)
	require.False(t, r.Result.IsError, "%+v", r.Result)
	all, err = b.eng.ListMissions(b.ctx, engine.MissionFilter{})
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, "café", all[0].Title)
}

// A bad model name in a tool call is a caller error naming the argument.
func TestTools_BadModelNameIsACallerError(t *testing.T) {
	b := setup(t, setupOpts{})
	res := b.call("create_mission", map[string]any{"title": "t", "model_policy": map[string]any{"model": "--dangerously-skip-permissions"}})
	require.True(t, res.IsError)
	require.Contains(t, text(res), `invalid argument: model_policy.model: "--dangerously-skip-permissions" starts with "-"`)
}
