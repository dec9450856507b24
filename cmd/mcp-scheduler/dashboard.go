package main

import (
	"net/http"

	"github.com/mcp-scheduler/mcp-scheduler/tools"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// dashboard builds the web dashboard served at / on the HTTP listener, over the same
// services as the MCP tools and behind the same tokens (nil: open, loopback only).
func (a *app) dashboard(tokens *tools.Tokens) (http.Handler, error) {
	return dashboard.New(dashboard.Options{Deps: a.deps(), Tokens: tokens, Logger: a.log.With("component", "dashboard")})
}
