package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Protocol versions (docs/mcp.md, "Versions"). An initialize names the revision the
// client wants; the server answers with that revision when it implements it as a
// session-based one (2024-11-05 to 2025-11-25), and with the latest session-based revision it
// implements, 2025-11-25, when the version is missing, unknown, or the stateless 2026-07-28
// (which has no initialize: clients reach it by server/discover). mcp-go already does the
// second; for a missing version it would assume 2025-03-26, which the hook below replaces.

// installVersionDefault makes an initialize without protocolVersion negotiate
// mcp.LATEST_LEGACY_PROTOCOL_VERSION.
func installVersionDefault(h *server.Hooks) {
	h.AddBeforeInitialize(func(_ context.Context, _ any, req *mcp.InitializeRequest) {
		if req.Params.ProtocolVersion == "" {
			req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
		}
	})
}
