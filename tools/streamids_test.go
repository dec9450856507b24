package tools

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// mixedTool sends one notification through mcp-go's session channel (which makes mcp-go
// itself turn the POST answer into an SSE stream, with ids of its own stream), then, once
// mcp-go's forwarder opened that stream, one through notify (the POST stream's own events),
// then returns.
func mixedTool(t *testing.T) Tool {
	return newTool(toolSpec{name: "mixed", title: "Mixed", group: GroupScheduler, effect: ReadOnly,
		description: "Test tool: a notification through mcp-go's channel, one through notify, then the result.",
		input:       inputSchema[EchoArgs](), output: outputSchema[EchoArgs](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a EchoArgs) (EchoArgs, error) {
			srv := server.ServerFromContext(ctx)
			if err := srv.SendNotificationToClient(ctx, "notifications/message", map[string]any{"level": "info", "data": "via mcp-go"}); err != nil {
				return a, err
			}
			ps := ctx.Value(postStreamKey{}).(*postStream)
			testenv.WaitFor(t, "mcp-go's forwarder to open its SSE stream", func() bool {
				ps.mu.Lock()
				defer ps.mu.Unlock()
				return ps.mode == modeInnerSSE
			})
			if err := notify(ctx, srv, "notifications/message", map[string]any{"level": "info", "data": "via notify"}); err != nil {
				return a, err
			}
			return a, nil
		})})
}

// TestStreams_OneIDSourceWhenMcpGoStreams: when mcp-go itself turns a POST answer into an
// SSE stream, every event of that stream (mcp-go's notification, ours, the result) carries
// an id of the POST stream's one source, so a GET with the id of its first event replays
// all the rest, the result included. Before, the result carried mcp-go's id and the
// notification ours: resuming from one did not replay the other's events.
func TestStreams_OneIDSourceWhenMcpGoStreams(t *testing.T) {
	b := setup(t, setupOpts{extra: []Tool{mixedTool(t)}})
	base, _ := httpServer(t, b, HTTPOptions{KeepAlive: time.Hour})
	h := rawSession(t, base)
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	res := postCtx(t, ctx, base+PathMCP, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mixed","arguments":{"text":"x"}}}`, h)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	var order, data []string
	for ev := range readSSE(res.Body) {
		if ev.comment {
			continue
		}
		require.NotEmpty(t, ev.id, "every event carries an id: %s", ev.data)
		order = append(order, ev.id)
		data = append(data, ev.data)
	}
	require.Len(t, order, 3, "two notifications and the result: %v", data)
	require.Contains(t, data[2], `"id":3`, "the result comes last")
	rest := openGET(t, ctx, base, h, order[0])
	require.Equal(t, http.StatusOK, rest.StatusCode)
	var replayed []string
	for ev := range readSSE(rest.Body) {
		replayed = append(replayed, ev.id)
	}
	require.Equal(t, order[1:], replayed, "the rest of the POST stream, the result included")
}
