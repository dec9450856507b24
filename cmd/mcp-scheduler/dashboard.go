package main

import (
	"net/http"

	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// dashboard builds the web dashboard served at / on the HTTP listener, over the same
// services as the MCP tools and behind the same token.
func (a *app) dashboard(token string) (http.Handler, error) {
	return dashboard.New(dashboard.Options{Deps: a.deps(), Token: token, Logger: a.log.With("component", "dashboard")})
}
