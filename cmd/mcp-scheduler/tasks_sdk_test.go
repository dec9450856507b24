package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// sdkTasks is what testdata/sdk-tasks.cjs prints.
type sdkTasks struct {
	Protocol     map[string]any    `json:"protocol"`
	Capabilities map[string]any    `json:"capabilities"`
	TaskSupport  map[string]string `json:"taskSupport"`
	Dispatch     []struct {
		Type       string          `json:"type"`
		Status     string          `json:"status"`
		TaskID     string          `json:"taskId"`
		Structured json.RawMessage `json:"structured"`
		Meta       map[string]any  `json:"meta"`
		Error      string          `json:"error"`
	} `json:"dispatch"`
	Cancelled   string `json:"cancelled"`
	AfterCancel string `json:"afterCancel"`
	Listed      bool   `json:"listed"`
	CancelAgain struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"cancelAgain"`
	Unknown struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"unknown"`
}

func runSDKTasks(t *testing.T, s *sandbox, mode string, env ...string) sdkTasks {
	t.Helper()
	return runSDKScript[sdkTasks](t, s, "testdata/sdk-tasks.cjs", mode, env...)
}

// checkSDKTasks checks what the SDK's task API saw, whatever the transport (docs/mcp.md,
// "Tasks").
func checkSDKTasks(t *testing.T, r sdkTasks) {
	t.Helper()
	require.Contains(t, r.Capabilities, "tasks")
	require.Equal(t, map[string]string{"dispatch": "optional", "claim_mission": "optional"}, r.TaskSupport)
	require.NotEmpty(t, r.Dispatch)
	first, last := r.Dispatch[0], r.Dispatch[len(r.Dispatch)-1]
	require.Equal(t, "taskCreated", first.Type)
	require.Equal(t, "working", first.Status)
	require.Equal(t, "result", last.Type, "the SDK polled the task to its result: %+v", r.Dispatch)
	var d struct {
		Voyage struct{ Title string }
		IDs    map[string]string
	}
	require.NoError(t, json.Unmarshal(last.Structured, &d))
	require.Equal(t, "sdk task voyage", d.Voyage.Title)
	require.Len(t, d.IDs, 1)
	require.Equal(t, map[string]any{"taskId": first.TaskID}, last.Meta["io.modelcontextprotocol/related-task"])
	require.Equal(t, "cancelled", r.Cancelled)
	require.Equal(t, "cancelled", r.AfterCancel)
	require.True(t, r.Listed)
	require.Equal(t, -32602, r.CancelAgain.Code, r.CancelAgain.Message)
	require.Contains(t, r.CancelAgain.Message, "terminal status 'cancelled'")
	require.Equal(t, -32602, r.Unknown.Code, r.Unknown.Message)
	require.Contains(t, r.Unknown.Message, "Task not found")
}

// TestTypeScriptSDK_TasksStdio: the official TypeScript SDK's task API over stdio.
func TestTypeScriptSDK_TasksStdio(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	checkSDKTasks(t, runSDKTasks(t, s, "stdio"))
}

// TestTypeScriptSDK_TasksStreamableHTTP: the same over Streamable HTTP with a bearer token.
func TestTypeScriptSDK_TasksStreamableHTTP(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	_, base := s.startHTTP([]string{EnvToken + "=sdk-token-789"})
	checkSDKTasks(t, runSDKTasks(t, s, "http", "MCP_URL="+base+"/mcp", "MCP_TOKEN=sdk-token-789"))
}
