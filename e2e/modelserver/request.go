package modelserver

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"
)

// API names which model API a request used.
type API string

// APIs served.
const (
	Anthropic API = "anthropic" // POST /v1/messages
	OpenAI    API = "openai"    // POST /v1/responses
	Other     API = ""          // anything else (answered 404, or a small stub)
)

// Request is one recorded HTTP request. Body is the raw body; JSON its decoded form (nil when
// it is not JSON). Reply is the turn the script chose (zero for non-model requests).
type Request struct {
	API    API
	Method string
	Path   string // the URL path without the query ("/v1/messages" for "/v1/messages?beta=true")
	Query  string
	Header map[string][]string
	Body   []byte
	JSON   map[string]any
	At     time.Time
	Reply  Turn
}

// HeaderValue returns the first value of header name (case-insensitive).
func (r *Request) HeaderValue(name string) string {
	for k, v := range r.Header {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// Model is the body's "model".
func (r *Request) Model() string {
	s, _ := r.JSON["model"].(string)
	return s
}

// LastIsToolResult reports whether the conversation's last entry is the result of a tool call:
// for Anthropic, a user message holding a tool_result block; for OpenAI, an input item of type
// function_call_output or custom_tool_call_output. Scripts choose the turn by this, not by
// counting requests (a CLI's retry repeats a request).
func (r *Request) LastIsToolResult() bool {
	switch r.API {
	case Anthropic:
		msgs, _ := r.JSON["messages"].([]any)
		if len(msgs) == 0 {
			return false
		}
		last, _ := msgs[len(msgs)-1].(map[string]any)
		if last["role"] != "user" {
			return false
		}
		blocks, _ := last["content"].([]any)
		for _, b := range blocks {
			if m, _ := b.(map[string]any); m["type"] == "tool_result" {
				return true
			}
		}
	case OpenAI:
		items, _ := r.JSON["input"].([]any)
		if len(items) == 0 {
			return false
		}
		last, _ := items[len(items)-1].(map[string]any)
		switch last["type"] {
		case "function_call_output", "custom_tool_call_output", "mcp_tool_call_output":
			return true
		}
	}
	return false
}

// ToolResults returns the text of every tool result in the request, oldest first.
func (r *Request) ToolResults() []string {
	var out []string
	switch r.API {
	case Anthropic:
		msgs, _ := r.JSON["messages"].([]any)
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			blocks, _ := mm["content"].([]any)
			for _, b := range blocks {
				if bm, _ := b.(map[string]any); bm["type"] == "tool_result" {
					out = append(out, collectText(bm["content"]))
				}
			}
		}
	case OpenAI:
		items, _ := r.JSON["input"].([]any)
		for _, it := range items {
			im, _ := it.(map[string]any)
			if t, _ := im["type"].(string); strings.HasSuffix(t, "_output") {
				s, _ := im["output"].(string)
				out = append(out, s)
			}
		}
	}
	return out
}

// ToolNames returns the names of the tools the request offers the model.
func (r *Request) ToolNames() []string {
	tools, _ := r.JSON["tools"].([]any)
	var out []string
	for _, t := range tools {
		if m, _ := t.(map[string]any); m != nil {
			if n, ok := m["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

var (
	claudeCwd = regexp.MustCompile(`Primary working directory: ([^\n]+)`)
	codexCwd  = regexp.MustCompile(`<cwd>([^<]+)</cwd>`)
)

// Workspace returns the agent's working directory as the CLI told the model: Claude Code puts
// "Primary working directory: /path" in a role "system" message inside messages, Codex puts
// "<cwd>/path</cwd>" in its environment context. "" when absent.
func (r *Request) Workspace() string {
	re := claudeCwd
	if r.API == OpenAI {
		re = codexCwd
	}
	var found string
	walkStrings(r.JSON, func(s string) bool {
		if m := re.FindStringSubmatch(s); m != nil {
			found = strings.TrimSpace(m[1])
			return false
		}
		return true
	})
	return found
}

// walkStrings calls f on every string inside v until f returns false.
func walkStrings(v any, f func(string) bool) bool {
	switch x := v.(type) {
	case string:
		return f(x)
	case []any:
		for _, e := range x {
			if !walkStrings(e, f) {
				return false
			}
		}
	case map[string]any:
		for _, e := range x {
			if !walkStrings(e, f) {
				return false
			}
		}
	}
	return true
}

// collectText joins the text of a tool result's content: a string, or content blocks whose
// "text" members are taken in order.
func collectText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, e := range x {
			if m, _ := e.(map[string]any); m != nil {
				if t, ok := m["text"].(string); ok {
					parts = append(parts, t)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func decodeJSON(b []byte) map[string]any {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}
