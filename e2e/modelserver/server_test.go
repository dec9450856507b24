package modelserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type sse struct {
	name string
	data map[string]any
}

func post(t *testing.T, url, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

func parseSSE(t *testing.T, body []byte) []sse {
	t.Helper()
	var out []sse
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d))
			require.Equal(t, name, d["type"], "event name and data type agree")
			out = append(out, sse{name, d})
		case line == "":
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

func names(evs []sse) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.name
	}
	return out
}

func TestServer_ListensOnLoopbackOnly(t *testing.T) {
	srv := modelserver.Start(t)
	addr, ok := srv.Addr().(*net.TCPAddr)
	require.True(t, ok)
	require.True(t, addr.IP.IsLoopback())
	require.Equal(t, "127.0.0.1", addr.IP.String())
	require.NotZero(t, addr.Port)
	require.Equal(t, "http://"+addr.String(), srv.URL())
	require.Equal(t, srv.URL()+"/v1", srv.OpenAIBaseURL())
}

func TestAnthropic_StreamsTextAndToolUse(t *testing.T) {
	srv := modelserver.Start(t)
	srv.Script(modelserver.Always(modelserver.Turn{
		Text:  "Writing the file.",
		Calls: []modelserver.Call{{Name: "Write", Input: map[string]any{"file_path": "/w/a.txt", "content": "x\n"}}},
		Usage: modelserver.Usage{InputTokens: 123, OutputTokens: 45},
	}))
	resp, body := post(t, srv.URL()+"/v1/messages?beta=true", `{"model":"claude-x","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"x-api-key": "k1"})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	evs := parseSSE(t, body)
	require.Equal(t, []string{"message_start",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}, names(evs))
	msg := evs[0].data["message"].(map[string]any)
	require.Equal(t, "claude-x", msg["model"])
	require.Equal(t, "assistant", msg["role"])
	require.Equal(t, float64(123), msg["usage"].(map[string]any)["input_tokens"])
	require.Equal(t, map[string]any{"type": "text_delta", "text": "Writing the file."}, evs[2].data["delta"])
	block := evs[4].data["content_block"].(map[string]any)
	require.Equal(t, "tool_use", block["type"])
	require.Equal(t, "Write", block["name"])
	require.Equal(t, float64(1), evs[4].data["index"])
	var input map[string]any
	require.NoError(t, json.Unmarshal([]byte(evs[5].data["delta"].(map[string]any)["partial_json"].(string)), &input))
	require.Equal(t, map[string]any{"file_path": "/w/a.txt", "content": "x\n"}, input)
	require.Equal(t, "tool_use", evs[7].data["delta"].(map[string]any)["stop_reason"])
	require.Equal(t, float64(45), evs[7].data["usage"].(map[string]any)["output_tokens"])

	reqs := srv.ModelRequests(modelserver.Anthropic)
	require.Len(t, reqs, 1)
	require.Equal(t, "/v1/messages", reqs[0].Path)
	require.Equal(t, "beta=true", reqs[0].Query)
	require.Equal(t, "k1", reqs[0].HeaderValue("X-Api-Key"))
	require.Equal(t, "claude-x", reqs[0].Model())
	require.NotZero(t, reqs[0].Reply.Usage.InputTokens)
}

func TestAnthropic_TextOnlyEndsTurn(t *testing.T) {
	srv := modelserver.Start(t)
	srv.Script(modelserver.Always(modelserver.Text("done", modelserver.Usage{OutputTokens: 2})))
	_, body := post(t, srv.URL()+"/v1/messages", `{"messages":[]}`, nil)
	evs := parseSSE(t, body)
	require.Equal(t, []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}, names(evs))
	require.Equal(t, "end_turn", evs[4].data["delta"].(map[string]any)["stop_reason"])
}

func TestOpenAI_StreamsMessageAndToolCalls(t *testing.T) {
	srv := modelserver.Start(t)
	srv.Script(modelserver.Always(modelserver.Turn{
		Text: "Creating it.",
		Calls: []modelserver.Call{
			{Name: "apply_patch", Freeform: modelserver.AddFilePatch("a.txt", "x\n")},
			{Name: "status", Namespace: "mcp__probe"},
			{Name: "exec_command", Input: map[string]any{"cmd": "ls"}},
		},
		Usage: modelserver.Usage{InputTokens: 300, OutputTokens: 7},
	}))
	resp, body := post(t, srv.OpenAIBaseURL()+"/responses", `{"model":"gpt-5.5","stream":true,"input":[]}`, map[string]string{"Authorization": "Bearer k2"})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	evs := parseSSE(t, body)
	require.Equal(t, []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done",
		"response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.output_item.done",
		"response.output_item.added", "response.output_item.done",
		"response.output_item.added", "response.output_item.done",
		"response.completed"}, names(evs))
	for i, e := range evs {
		require.Equal(t, float64(i), e.data["sequence_number"])
	}
	require.Equal(t, "Creating it.", evs[4].data["delta"])
	patch := evs[9].data["item"].(map[string]any)
	require.Equal(t, "custom_tool_call", patch["type"])
	require.Equal(t, "apply_patch", patch["name"])
	require.Equal(t, "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n", patch["input"])
	mcp := evs[11].data["item"].(map[string]any)
	require.Equal(t, map[string]any{"type": "function_call", "id": mcp["id"], "status": "completed", "call_id": mcp["call_id"],
		"name": "status", "namespace": "mcp__probe", "arguments": "{}"}, mcp)
	require.Equal(t, `{"cmd":"ls"}`, evs[13].data["item"].(map[string]any)["arguments"])
	done := evs[14].data["response"].(map[string]any)
	require.Equal(t, "completed", done["status"])
	require.Len(t, done["output"], 4)
	require.Equal(t, map[string]any{"input_tokens": float64(300), "input_tokens_details": map[string]any{"cached_tokens": float64(0)},
		"output_tokens": float64(7), "output_tokens_details": map[string]any{"reasoning_tokens": float64(0)}, "total_tokens": float64(307)}, done["usage"])
	require.Equal(t, "Bearer k2", srv.ModelRequests(modelserver.OpenAI)[0].HeaderValue("authorization"))
}

func TestErrors_StatusAndBodyPerAPI(t *testing.T) {
	srv := modelserver.Start(t)
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/v1/messages", 401, `{"error":{"message":"invalid x-api-key","type":"authentication_error"},"type":"error"}`},
		{"/v1/messages", 500, `{"error":{"message":"Internal server error","type":"api_error"},"type":"error"}`},
		{"/v1/messages", 529, `{"error":{"message":"Overloaded","type":"overloaded_error"},"type":"error"}`},
		{"/v1/responses", 401, `{"error":{"code":"invalid_api_key","message":"Incorrect API key provided.","param":null,"type":"invalid_request_error"}}`},
		{"/v1/responses", 500, `{"error":{"code":null,"message":"The server had an error while processing your request.","param":null,"type":"server_error"}}`},
		{"/v1/responses", 429, `{"error":{"code":"rate_limit_exceeded","message":"Rate limit reached.","param":null,"type":"requests"}}`},
	} {
		srv.Script(modelserver.Always(modelserver.Fail(tc.status)))
		resp, body := post(t, srv.URL()+tc.path, `{}`, nil)
		require.Equal(t, tc.status, resp.StatusCode, tc.path)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		require.NotEmpty(t, resp.Header.Get("request-id"))
		require.JSONEq(t, tc.want, string(body), "%s %d", tc.path, tc.status)
	}
	srv.Script(modelserver.Always(modelserver.Turn{Err: &modelserver.APIError{Status: 400, Type: "invalid_request_error", Message: "prompt is too long"}}))
	_, body := post(t, srv.URL()+"/v1/messages", `{}`, nil)
	require.JSONEq(t, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`, string(body))
}

func TestServer_NoScriptSequenceExhaustedAndOtherRoutes(t *testing.T) {
	srv := modelserver.Start(t)
	resp, body := post(t, srv.URL()+"/v1/messages", `{}`, nil)
	require.Equal(t, 500, resp.StatusCode)
	require.Contains(t, string(body), "no script set")

	srv.Script(modelserver.Sequence(modelserver.Text("one", modelserver.Usage{})))
	resp, _ = post(t, srv.URL()+"/v1/messages", `{}`, nil)
	require.Equal(t, 200, resp.StatusCode)
	resp, body = post(t, srv.URL()+"/v1/messages", `{}`, nil)
	require.Equal(t, 500, resp.StatusCode)
	require.Contains(t, string(body), "script exhausted after 1 turns")

	resp, body = post(t, srv.URL()+"/v1/messages/count_tokens", `{}`, nil)
	require.Equal(t, 200, resp.StatusCode)
	require.JSONEq(t, `{"input_tokens":100}`, string(body))
	resp, _ = post(t, srv.URL()+"/api/hello", `{}`, nil)
	require.Equal(t, 404, resp.StatusCode)
	require.Len(t, srv.Requests(), 5)
	require.Len(t, srv.ModelRequests(modelserver.Anthropic), 3)
}

func TestServer_CloseAbandonsDelayedReplies(t *testing.T) {
	srv, err := modelserver.New()
	require.NoError(t, err)
	srv.Script(modelserver.Always(modelserver.Turn{Text: "late", Delay: time.Hour}))
	errc := make(chan error, 1)
	go func() {
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader(`{}`))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	testenv.WaitFor(t, "the delayed request to arrive", func() bool { return len(srv.Requests()) == 1 })
	start := time.Now()
	require.NoError(t, srv.Close())
	require.Less(t, time.Since(start), time.Minute, "Close does not wait for the reply's one-hour delay")
	testenv.Receive(t, "the client to see the connection end (an error or an empty reply)", errc)
	require.NoError(t, srv.Close(), "Close is idempotent")
}

// The helpers read the request bodies the real CLIs sent (testdata, from shared/fixtures).
func recorded(t *testing.T, file string, api modelserver.API) []*modelserver.Request {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	require.NoError(t, err)
	var out []*modelserver.Request
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var rec struct {
			Body json.RawMessage `json:"body"`
		}
		require.NoError(t, json.Unmarshal(line, &rec))
		var m map[string]any
		require.NoError(t, json.Unmarshal(rec.Body, &m))
		out = append(out, &modelserver.Request{API: api, Body: rec.Body, JSON: m})
	}
	return out
}

func TestRequest_HelpersOnRecordedClaudeRequests(t *testing.T) {
	reqs := recorded(t, "claude-requests.jsonl", modelserver.Anthropic)
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		require.Equal(t, "/home/dev/runs/write1", r.Workspace(), "the cwd sits in a role:system message")
		require.Contains(t, r.ToolNames(), "Write")
	}
	require.False(t, reqs[0].LastIsToolResult())
	require.True(t, reqs[1].LastIsToolResult())
	require.Equal(t, []string{"File created successfully at: /home/dev/runs/write1/hello.txt (file state is current in your context — no need to Read it back)"}, reqs[1].ToolResults())

	script := modelserver.WriteFile("hello.txt", "hi\n", modelserver.Usage{InputTokens: 1, OutputTokens: 2})
	first := script(reqs[0])
	require.Equal(t, modelserver.Turn{Text: "Writing hello.txt.", Calls: []modelserver.Call{{Name: "Write",
		Input: map[string]any{"file_path": "/home/dev/runs/write1/hello.txt", "content": "hi\n"}}},
		Usage: modelserver.Usage{InputTokens: 1, OutputTokens: 2}}, first)
	require.Equal(t, modelserver.Text("done", modelserver.Usage{InputTokens: 1, OutputTokens: 2}), script(reqs[1]))

	// Without a workspace in the request the script cannot aim the Write: it answers 500.
	bare := &modelserver.Request{API: modelserver.Anthropic, JSON: map[string]any{"messages": []any{}}}
	require.Equal(t, 500, script(bare).Err.Status)
}

func TestRequest_HelpersOnRecordedCodexRequests(t *testing.T) {
	for _, file := range []string{"codex-requests.jsonl", "codex-requests-apply-patch.jsonl"} {
		reqs := recorded(t, file, modelserver.OpenAI)
		require.Len(t, reqs, 2)
		require.False(t, reqs[0].LastIsToolResult(), file)
		require.True(t, reqs[1].LastIsToolResult(), file)
		require.Contains(t, reqs[0].Workspace(), "/home/dev/runs/cx-")
		require.Equal(t, "gpt-5.5", reqs[0].Model())
		require.Contains(t, reqs[0].ToolNames(), "apply_patch")
		require.Len(t, reqs[1].ToolResults(), 1)
	}
	reqs := recorded(t, "codex-requests-apply-patch.jsonl", modelserver.OpenAI)
	turn := modelserver.WriteFile("hello.txt", "a\nb\n", modelserver.Usage{})(reqs[0])
	require.Equal(t, []modelserver.Call{{Name: "apply_patch", Freeform: "*** Begin Patch\n*** Add File: hello.txt\n+a\n+b\n*** End Patch\n"}}, turn.Calls)
	shell := modelserver.WriteFileShell("hello.txt", "a", modelserver.Usage{})(reqs[0])
	require.Equal(t, []modelserver.Call{{Name: "exec_command", Input: map[string]any{"cmd": "printf %s 'a' > hello.txt"}}}, shell.Calls)
}
