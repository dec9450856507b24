package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// progress sends notifications/progress for one call, when (and only when) the client asked
// for them with a progress token in the request's _meta. The zero value sends nothing.
type progress struct {
	srv   *server.MCPServer
	token mcp.ProgressToken
	n     float64
}

func newProgress(ctx context.Context, req mcp.CallToolRequest) *progress {
	p := &progress{srv: server.ServerFromContext(ctx)}
	if m := req.Params.Meta; m != nil {
		p.token = m.ProgressToken
	}
	return p
}

// send reports one step. Progress must grow with each notification (MCP spec), so the
// counter moves at least by one each time; total is omitted when unknown (0). A client that
// went away or a full notification queue only loses the notification.
func (p *progress) send(ctx context.Context, done, total float64, message string) {
	if p.token == nil || p.srv == nil {
		return
	}
	if done <= p.n {
		done = p.n + 1
	}
	p.n = done
	params := map[string]any{"progressToken": p.token, "progress": done, "message": message}
	if total > 0 && total >= done {
		params["total"] = total
	}
	_ = p.srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), params)
}
