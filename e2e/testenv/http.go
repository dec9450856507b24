package testenv

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// MCPRequest sends one HTTP request to an MCP endpoint with the headers every Streamable HTTP
// client sends (Content-Type: application/json; Accept: application/json, text/event-stream)
// plus header; a "Host" entry sets the request's Host. An empty body sends none (GET,
// DELETE). A request that cannot be made or sent fails t; the response body is closed when t
// ends, so callers may read it or leave it.
func MCPRequest(t testing.TB, ctx context.Context, method, url, body string, header map[string]string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}
