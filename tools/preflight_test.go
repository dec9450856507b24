package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

var unknownVoyage = domain.PrefixVoyage + "_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"

// rpcErrorCase is one resources/read or prompts/get the caller got wrong, the code it must
// get (legacy revisions, 2026-07-28) and what the message must say.
type rpcErrorCase struct {
	method, params string
	legacy, modern int
	says           []string
	// unmatched: no template matches the URI, so without preflight mcp-go answers it itself
	// (not found, its own text).
	unmatched bool
}

// rpcErrorCases are the cases for mission m (pending, never run).
func rpcErrorCases(m string) []rpcErrorCase {
	read := func(uri string, says ...string) rpcErrorCase {
		return rpcErrorCase{"resources/read", fmt.Sprintf(`{"uri":%q}`, uri), mcp.RESOURCE_NOT_FOUND, mcp.INVALID_PARAMS,
			append([]string{"resource not found: " + uri}, says...), false}
	}
	prompt := func(name, args string, says ...string) rpcErrorCase {
		return rpcErrorCase{"prompts/get", fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args), mcp.INVALID_PARAMS, mcp.INVALID_PARAMS, says, false}
	}
	return []rpcErrorCase{
		read("mission://msn_nope", `"msn_nope" is not an id`, "list_missions"),
		read("mission://"+unknownMission, "no mission has this id", "list_missions"),
		read("mission://"+unknownMission+"/log", "no mission has this id", "create_mission"),
		read("mission://x/log", `"x" is not an id`),
		unmatched(read("mission://"+m+"?x=1", "no resource has this form", "without query")),
		unmatched(read("mission://a/b/c", "mission://{id}/log", "list_missions")),
		read("voyage://", `"" is not an id`, "voyage ids"),
		read("voyage://"+m, "ids look like "+unknownVoyage, "voyage ids ("+domain.PrefixVoyage+"_…) come from dispatch"),
		read("voyage://"+unknownVoyage, "no voyage has this id", "dispatch"),
		prompt("plan_voyage", `{}`, `prompt argument "goal" is required`, `{"goal":`),
		prompt("plan_voyage", `{"goal":"g","max_missions":"zero"}`, `"max_missions" "zero" is not a positive number`, "at least 1"),
		prompt("agent_brief", `{}`, `"mission_id" is required`, "list_missions"),
		prompt("agent_brief", `{"mission_id":"msn_nope"}`, `"mission_id" "msn_nope" is not a mission id`),
		prompt("agent_brief", fmt.Sprintf(`{"mission_id":%q,"pull_mode":"maybe"}`, m), `"pull_mode" is "maybe"`, `send "true"`),
		prompt("review_mission", fmt.Sprintf(`{"mission_id":%q}`, unknownMission), `"mission_id" names no mission`, unknownMission),
		prompt("escalation_report", `{"escalation_id":"esc_x"}`, `"escalation_id" "esc_x" is not an escalation id`, "list_escalations"),
	}
}

func unmatched(c rpcErrorCase) rpcErrorCase { c.unmatched = true; return c }

// exerciseRPCErrors asserts every case's code and message on w, and that the requests done
// right are still answered (preflight lets them through to mcp-go).
func exerciseRPCErrors(t *testing.T, w taskWire, modern bool, m string) {
	t.Helper()
	for _, c := range rpcErrorCases(m) {
		_, e := w.rpc(c.method, c.params)
		want := c.legacy
		if modern {
			want = c.modern
		}
		require.NotNil(t, e, "%s %s", c.method, c.params)
		require.Equal(t, want, e.Code, "%s %s: %s", c.method, c.params, e.Message)
		for _, s := range c.says {
			require.Contains(t, e.Message, s, "%s %s", c.method, c.params)
		}
	}
	for _, good := range [][2]string{
		{"resources/read", fmt.Sprintf(`{"uri":"mission://%s"}`, m)},
		{"resources/read", fmt.Sprintf(`{"uri":"mission://%s/log"}`, m)},
		{"resources/read", `{"uri":"scheduler://status"}`},
		{"prompts/get", `{"name":"plan_voyage","arguments":{"goal":"add a flag","max_missions":"3"}}`},
		{"prompts/get", fmt.Sprintf(`{"name":"agent_brief","arguments":{"mission_id":%q,"pull_mode":"false"}}`, m)},
		{"prompts/get", fmt.Sprintf(`{"name":"review_mission","arguments":{"mission_id":%q}}`, m)},
		{"prompts/get", fmt.Sprintf(`{"name":"escalation_report","arguments":{"mission_id":%q}}`, m)},
	} {
		raw, e := w.rpc(good[0], good[1])
		require.Nil(t, e, "%s %s", good[0], good[1])
		require.NotEmpty(t, raw)
	}
}

// TestRPCErrors_EveryTransport: resources/read of an unknown or malformed id answers -32002
// (-32602 on 2026-07-28) with a message naming the URI and where ids come from, and
// prompts/get with a missing or invalid argument -32602 naming the argument as sent, on
// stdio (2025-11-25 and 2026-07-28), Streamable HTTP in a session and stateless, and legacy
// SSE (docs/error-handling.md, "Resources and prompts").
func TestRPCErrors_EveryTransport(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "exists"}).ID
	base, _ := httpServer(t, b, HTTPOptions{})

	t.Run("stdio", func(t *testing.T) { exerciseRPCErrors(t, newStdioWire(t, b), false, m) })
	t.Run("stdio-2026", func(t *testing.T) {
		c := stdioClient(t, b)
		initClient(t, b.ctx, c, "")
		require.Equal(t, mcp.ProtocolVersion20260728, c.ProtocolVersion())
		exerciseRPCErrors(t, &clientWire{ctx: b.ctx, c: c}, true, m)
	})
	t.Run("http-session", func(t *testing.T) { exerciseRPCErrors(t, newHTTPWire(t, base), false, m) })
	t.Run("http-stateless-raw", func(t *testing.T) { exerciseRPCErrors(t, &modernWire{t: t, url: base + PathMCP}, true, m) })
	t.Run("http-stateless-client", func(t *testing.T) {
		c := streamableClient(t, base+PathMCP, nil)
		initClient(t, b.ctx, c, "")
		require.Equal(t, mcp.ProtocolVersion20260728, c.ProtocolVersion())
		exerciseRPCErrors(t, &clientWire{ctx: b.ctx, c: c}, true, m)
	})
	t.Run("legacy-sse", func(t *testing.T) {
		c, err := client.NewSSEMCPClient(base + PathSSE)
		require.NoError(t, err)
		initClient(t, b.ctx, c, mcp.LATEST_LEGACY_PROTOCOL_VERSION)
		exerciseRPCErrors(t, &clientWire{ctx: b.ctx, c: c}, false, m)
	})
}

// TestRPCErrors_DataNamesTheURI: the resource-not-found error carries data.uri (the spec's
// example), in a session and stateless.
func TestRPCErrors_DataNamesTheURI(t *testing.T) {
	b := setup(t, setupOpts{})
	base, _ := httpServer(t, b, HTTPOptions{})
	uri := "mission://" + unknownMission
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"r1","method":"resources/read","params":{"uri":%q}}`, uri)
	var e struct {
		Error struct {
			Code int               `json:"code"`
			Data map[string]string `json:"data"`
		} `json:"error"`
	}
	res := post(t, base+PathMCP, body, initSession(t, base))
	require.Equal(t, http.StatusOK, res.StatusCode, "a JSON-RPC error in a session is an HTTP 200")
	require.NoError(t, json.NewDecoder(res.Body).Decode(&e))
	require.Equal(t, mcp.RESOURCE_NOT_FOUND, e.Error.Code)
	require.Equal(t, map[string]string{"uri": uri}, e.Error.Data)

	mw := &modernWire{t: t, url: base + PathMCP}
	res = mw.post("resources/read", fmt.Sprintf(`{"uri":%q}`, uri))
	require.Equal(t, http.StatusBadRequest, res.StatusCode, "2026-07-28 maps -32602 onto 400, as mcp-go does")
	require.NoError(t, json.NewDecoder(res.Body).Decode(&e))
	require.Equal(t, mcp.INVALID_PARAMS, e.Error.Code)
	require.Equal(t, map[string]string{"uri": uri}, e.Error.Data)
}

// TestRPCErrors_HandlerSaysTheSame: what passes preflight and then fails in the handler (the
// in-process transport has no preflight, as a mission pruned in between) fails with the
// same text, as mcp-go's -32603 (its handlerError maps every handler error so).
func TestRPCErrors_HandlerSaysTheSame(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "exists"}).ID
	w := newStdioWire(t, b)
	in := &clientWire{ctx: b.ctx, c: b.client}
	for _, c := range rpcErrorCases(m) {
		_, early := w.rpc(c.method, c.params)
		_, late := in.rpc(c.method, c.params)
		require.NotNil(t, early)
		require.NotNil(t, late, "%s %s", c.method, c.params)
		if c.unmatched {
			require.Equal(t, c.modern, late.Code, "mcp-go's own not found (the in-process client is of 2026-07-28): %s", late.Message)
			continue
		}
		require.Equal(t, mcp.INTERNAL_ERROR, late.Code, "%s %s: %s", c.method, c.params, late.Message)
		require.Contains(t, late.Message, early.Message, "one rule, one text")
	}
}

// clientWire drives an mcp-go client; the code is read back from the sentinel error the
// client maps each JSON-RPC code to (mcp.JSONRPCErrorDetails.AsError).
type clientWire struct {
	ctx context.Context
	c   *client.Client
}

func (w *clientWire) rpc(method, params string) (json.RawMessage, *rpcErrorBody) {
	var res any
	var err error
	switch method {
	case "resources/read":
		var p mcp.ReadResourceParams
		if err = json.Unmarshal([]byte(params), &p); err == nil {
			res, err = w.c.ReadResource(w.ctx, mcp.ReadResourceRequest{Params: p})
		}
	case "prompts/get":
		var p mcp.GetPromptParams
		if err = json.Unmarshal([]byte(params), &p); err == nil {
			res, err = w.c.GetPrompt(w.ctx, mcp.GetPromptRequest{Params: p})
		}
	default:
		err = fmt.Errorf("clientWire: %s is not driven", method)
	}
	if err != nil {
		return nil, &rpcErrorBody{Code: codeOf(err), Message: err.Error()}
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, &rpcErrorBody{Message: err.Error()}
	}
	return raw, nil
}

func codeOf(err error) int {
	switch {
	case errors.Is(err, mcp.ErrResourceNotFound):
		return mcp.RESOURCE_NOT_FOUND
	case errors.Is(err, mcp.ErrInvalidParams):
		return mcp.INVALID_PARAMS
	case errors.Is(err, mcp.ErrInternalError):
		return mcp.INTERNAL_ERROR
	}
	return 0
}

// modernWire sends raw 2026-07-28 requests over Streamable HTTP, no session: the version in
// header and _meta, the client's capabilities, Mcp-Method and Mcp-Name as mcp-go's client
// sends them.
type modernWire struct {
	t    *testing.T
	url  string
	next int
}

func (w *modernWire) post(method, params string) *http.Response {
	w.t.Helper()
	var p map[string]any
	require.NoError(w.t, json.Unmarshal([]byte(params), &p))
	p["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "raw-modern", "version": "0"},
		mcp.MetaKeyClientCapabilities: map[string]any{},
	}
	rawParams, err := json.Marshal(p)
	require.NoError(w.t, err)
	w.next++
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, w.next, method, rawParams)
	h := map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: method}
	if name, ok := mcp.ExtractHeaderName(mcp.MCPMethod(method), rawParams); ok {
		h[mcp.HeaderName] = name
	}
	return post(w.t, w.url, body, h)
}

func (w *modernWire) rpc(method, params string) (json.RawMessage, *rpcErrorBody) {
	w.t.Helper()
	res := w.post(method, params)
	r := readReply(w.t, res, fmt.Sprint(w.next))
	if r.Error != nil {
		require.Equal(w.t, http.StatusBadRequest, res.StatusCode, "2026-07-28 maps -32602 and -32002-turned-32602 onto 400")
	} else {
		require.Equal(w.t, http.StatusOK, res.StatusCode)
	}
	return r.Result, r.Error
}

// stdioClient is an mcp-go client of b's server over ServeStdio through two OS pipes.
func stdioClient(t *testing.T, b *bundle) *client.Client {
	t.Helper()
	srvIn, cliOut, err := os.Pipe()
	require.NoError(t, err)
	cliIn, srvOut, err := os.Pipe()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = b.srv.ServeStdio(ctx, srvIn, srvOut) }()
	t.Cleanup(func() {
		cancel()
		_ = cliOut.Close()
		<-done
		_ = srvOut.Close()
		_ = srvIn.Close()
		_ = cliIn.Close()
	})
	return client.NewClient(transport.NewIO(cliIn, cliOut, io.NopCloser(eofReader{})))
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// TestRPCErrors_EscalationOfAPrunedMission: the report prompt of an escalation whose mission
// is no longer stored says so instead of blaming a mission_id the caller never sent.
func TestRPCErrors_EscalationOfAPrunedMission(t *testing.T) {
	b := setup(t, setupOpts{})
	m := b.createMission(map[string]any{"title": "short-lived"})
	esc := ok[EscalationResult](b, "escalate", map[string]any{"reason": "no owner", "decision_required": "who?",
		"mission_ids": []string{m.ID}, "route": "person"}).Escalation
	_, err := b.eng.Cancel(b.ctx, m.ID, "not needed", false, "t")
	require.NoError(t, err)
	require.NoError(t, b.eng.Purge(b.ctx, m.ID, "t"))
	report, err := getPrompt(b, "escalation_report", map[string]string{"escalation_id": esc.ID})
	require.NoError(t, err)
	require.Contains(t, report, m.ID+": no longer stored (pruned)")
}
