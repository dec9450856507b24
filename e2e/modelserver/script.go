package modelserver

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Script answers one model request with one turn. It runs on the server's handler goroutines,
// one call per request; it must be safe for concurrent use when the agent may call in parallel.
type Script func(r *Request) Turn

// Turn is one model response, rendered for whichever API asked: the assistant's Text (may be
// empty), then its tool Calls, with Usage reported as the turn's token counts. A turn with
// Err set is answered with that HTTP error instead. Delay holds the answer back (until the
// client gives up or the server closes first), for tests that stop an agent mid-request.
type Turn struct {
	Text  string
	Calls []Call
	Usage Usage
	Err   *APIError
	Delay time.Duration
	// Header holds extra response headers (rate-limit headers: anthropic-ratelimit-unified-*,
	// retry-after, x-codex-*), sent with the answer or the error alike.
	Header map[string]string
}

// Call is one tool call the model makes.
//
// Anthropic renders it as a tool_use block {name, input: Input}. OpenAI renders it as a
// function_call {name, arguments: JSON of Input, namespace: Namespace} or, when Freeform is
// set, as a custom_tool_call {name, input: Freeform} (Codex's apply_patch).
type Call struct {
	Name      string
	Input     map[string]any
	Freeform  string
	Namespace string // OpenAI only: "mcp__<server>" for an MCP tool
}

// Usage is the token count a turn reports: Anthropic message_start input_tokens and
// message_delta output_tokens; OpenAI response.completed usage.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
}

// APIError is an HTTP error answer. Type, Code and Message default per API and status (see
// errorBody): a 401 is authentication_error / invalid_api_key, a 500 api_error / server_error,
// a 529 overloaded_error.
type APIError struct {
	Status  int
	Type    string
	Code    string // OpenAI only
	Message string
}

// Text is a turn that answers with text only.
func Text(s string, u Usage) Turn { return Turn{Text: s, Usage: u} }

// Fail is a turn answered with HTTP status and the API's default error body for it.
func Fail(status int) Turn { return Turn{Err: &APIError{Status: status}} }

// Always answers every request with t.
func Always(t Turn) Script { return func(*Request) Turn { return t } }

// Sequence answers the n-th model request with turns[n-1]; once they are used up it answers
// HTTP 500 "script exhausted" so a test that expected fewer calls fails visibly.
func Sequence(turns ...Turn) Script {
	var mu sync.Mutex
	next := 0
	return func(*Request) Turn {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(turns) {
			return Turn{Err: &APIError{Status: 500, Message: fmt.Sprintf("modelserver: script exhausted after %d turns", len(turns))}}
		}
		next++
		return turns[next-1]
	}
}

// ToolThen answers with first until the conversation ends in a tool result, then with final.
func ToolThen(first, final Turn) Script {
	return func(r *Request) Turn {
		if r.LastIsToolResult() {
			return final
		}
		return first
	}
}

// WriteFile scripts "create the file rel (relative to the agent's workspace) with content":
// the first turn calls the CLI's own file tool, the turn after the tool result says "done".
// Each turn reports usage. Claude Code gets Write{file_path: <workspace>/rel, content}; the
// workspace is read from the request (a request without one is answered 500). Codex gets an
// apply_patch custom tool call adding rel; content should end with "\n" (apply_patch writes
// every line with one).
func WriteFile(rel, content string, usage Usage) Script {
	return func(r *Request) Turn {
		if r.LastIsToolResult() {
			return Text("done", usage)
		}
		call, err := writeCall(r, rel, content)
		if err != nil {
			return Turn{Err: &APIError{Status: 500, Message: "modelserver: " + err.Error()}}
		}
		return Turn{Text: "Writing " + rel + ".", Calls: []Call{call}, Usage: usage}
	}
}

// WriteFileShell is WriteFile through the shell tool: Claude Code's Bash and Codex's
// exec_command run `printf %s '<content>' > rel`. content must not contain a single quote.
func WriteFileShell(rel, content string, usage Usage) Script {
	return func(r *Request) Turn {
		if r.LastIsToolResult() {
			return Text("done", usage)
		}
		cmd := fmt.Sprintf("printf %%s '%s' > %s", content, rel)
		call := Call{Name: "Bash", Input: map[string]any{"command": cmd, "description": "write " + rel}}
		if r.API == OpenAI {
			call = Call{Name: "exec_command", Input: map[string]any{"cmd": cmd}}
		}
		return Turn{Text: "Writing " + rel + ".", Calls: []Call{call}, Usage: usage}
	}
}

// writeCall is the file-writing tool call for the API of r.
func writeCall(r *Request, rel, content string) (Call, error) {
	if r.API == OpenAI {
		return Call{Name: "apply_patch", Freeform: AddFilePatch(rel, content)}, nil
	}
	ws := r.Workspace()
	if ws == "" {
		return Call{}, fmt.Errorf("no working directory in the request to write %s into", rel)
	}
	return Call{Name: "Write", Input: map[string]any{"file_path": filepath.Join(ws, rel), "content": content}}, nil
}

// AddFilePatch is an apply_patch body that creates path with content.
func AddFilePatch(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + path + "\n")
	for _, line := range strings.SplitAfter(content, "\n") {
		if line == "" {
			continue
		}
		b.WriteString("+" + strings.TrimSuffix(line, "\n") + "\n")
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

// RateLimited is Anthropic's answer to a request while the account's unified usage window is
// exhausted until resetAt: HTTP 429 rate_limit_error with the anthropic-ratelimit-unified-*
// headers (status rejected, reset in Unix seconds, the five-hour claim) and retry-after.
// Claude Code 2.1.332 with an API key reports it as a 429 rate_limit error and shows none of
// the headers (docs/agents.md, "Rate-limit windows").
func RateLimited(resetAt time.Time) Turn {
	secs := max(int(time.Until(resetAt).Round(time.Second)/time.Second), 1)
	return Turn{Err: &APIError{Status: 429, Message: "This request would exceed your account's rate limit. Please try again later."},
		Header: map[string]string{"anthropic-ratelimit-unified-status": "rejected",
			"anthropic-ratelimit-unified-reset":                fmt.Sprint(resetAt.Unix()),
			"anthropic-ratelimit-unified-representative-claim": "five_hour",
			"anthropic-ratelimit-unified-5h-status":            "rejected",
			"anthropic-ratelimit-unified-5h-reset":             fmt.Sprint(resetAt.Unix()),
			"anthropic-ratelimit-unified-5h-utilization":       "1.0",
			"retry-after": fmt.Sprint(secs)}}
}
