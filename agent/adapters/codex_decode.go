package adapters

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// codexEvent is one `codex exec --json` line, flattened (agent-clis.md §4, "codex exec --json
// events").
type codexEvent struct {
	Type     string      `json:"type"`
	ThreadID string      `json:"thread_id"`
	Message  string      `json:"message"` // type error
	Error    *codexError `json:"error"`   // turn.failed
	Usage    *codexUsage `json:"usage"`   // turn.completed
	Item     *codexItem  `json:"item"`    // item.*
}

type codexError struct {
	Message string `json:"message"`
}

type codexUsage struct {
	InputTokens       int64 `json:"input_tokens"`        // includes cached_input_tokens
	OutputTokens      int64 `json:"output_tokens"`       // includes reasoning_output_tokens
	CachedInputTokens int64 `json:"cached_input_tokens"` // the part of input read from the cache
}

type codexItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Text    string `json:"text"`    // agent_message, reasoning
	Message string `json:"message"` // error
	Status  string `json:"status"`
	// command_execution
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int   `json:"exit_code"`
	// file_change
	Changes []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
	// mcp_tool_call
	Server string      `json:"server"`
	Tool   string      `json:"tool"`
	Error  *codexError `json:"error"`
	// web_search
	Query string `json:"query"`
	// todo_list
	Items []struct {
		Text      string `json:"text"`
		Completed bool   `json:"completed"`
	} `json:"items"`
}

type codexDecoder struct {
	result  *agent.WorkerResult
	trouble apiTrouble
	last    string // the last agent_message, the summary of a completed turn
	written []string
	seen    map[string]bool
	denials codexDenials // commands the sandbox refused
	rate    rateState    // the usage window (codex_ratelimit.go)
	usage   codexUsageTracker
}

func newCodexDecoder() *codexDecoder {
	return &codexDecoder{seen: map[string]bool{}, rate: newRateState()}
}

// Line maps one event (see docs/agents.md for the table).
func (d *codexDecoder) Line(line []byte) ([]agent.Message, error) {
	if err := agent.CheckJSONUTF8(line); err != nil {
		return nil, fmt.Errorf("codex: protocol error: %w", err)
	}
	var ev codexEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil, fmt.Errorf("codex: not an exec --json event: %w", err)
	}
	switch ev.Type {
	case "thread.started":
		return []agent.Message{logMsg("info", "codex thread "+ev.ThreadID+" started")}, nil
	case "turn.started":
		return []agent.Message{progressMsg("codex turn started")}, nil
	case "item.started", "item.updated":
		if ev.Item == nil {
			return nil, fmt.Errorf("codex: %s without an item", ev.Type)
		}
		return d.itemStarted(ev.Item), nil
	case "item.completed":
		if ev.Item == nil {
			return nil, fmt.Errorf("codex: item.completed without an item")
		}
		return d.itemCompleted(ev.Item), nil
	case "error":
		if codexFailureKind(ev.Message) == agent.KindAuth {
			d.trouble.auth = ev.Message
		} else {
			d.trouble.model = ev.Message
		}
		return append([]agent.Message{logMsg("warn", "codex: "+capBytes(ev.Message, logBytes))}, d.rateMessages(ev.Message)...), nil
	case "turn.completed":
		out, err := d.finish(d.denials.deniedResult(d.completed(ev.Usage)))
		spend := d.usage.turn(ev.Usage) // the spend first: a budget it crosses stops the attempt
		if err != nil {
			// A second terminal event: the first result stands, but this turn's tokens were
			// spent. A line with an error loses its messages (the runner counts it as not
			// understood), so say it as a warning beside the spend.
			return append(spend, logMsg("warn", err.Error())), nil
		}
		return append(spend, out...), nil
	case "turn.failed":
		msg := ""
		if ev.Error != nil {
			msg = ev.Error.Message
		}
		out, err := d.finish(d.failed(msg))
		if err == nil && d.result.Failure.Kind == agent.KindRateLimit {
			out = append(d.rateMessages(msg), out...)
		}
		return out, err
	case "":
		return nil, fmt.Errorf(`codex: an event without "type"`)
	}
	return nil, nil // future event types
}

func (d *codexDecoder) itemStarted(it *codexItem) []agent.Message {
	switch it.Type {
	case "command_execution":
		return []agent.Message{progressMsg("$ " + it.Command)}
	case "file_change":
		return []agent.Message{progressMsg("editing files: " + codexChanges(it))}
	case "mcp_tool_call":
		return []agent.Message{progressMsg("MCP " + it.Server + "." + it.Tool)}
	case "web_search":
		return []agent.Message{progressMsg("web search: " + it.Query)}
	case "todo_list":
		done := 0
		for _, t := range it.Items {
			if t.Completed {
				done++
			}
		}
		return []agent.Message{progressMsg(fmt.Sprintf("plan: %d of %d steps done", done, len(it.Items)))}
	}
	return nil
}

func (d *codexDecoder) itemCompleted(it *codexItem) []agent.Message {
	switch it.Type {
	case "agent_message":
		d.last = it.Text
		return textEvents(it.Text)
	case "reasoning":
		return []agent.Message{logMsg("debug", capBytes(it.Text, logBytes))}
	case "command_execution":
		d.denials.saw(it)
		level, exit := "info", "no exit code"
		if it.ExitCode != nil {
			exit = fmt.Sprintf("exit %d", *it.ExitCode)
		}
		if it.Status == "failed" || it.Status == "declined" || (it.ExitCode != nil && *it.ExitCode != 0) {
			level = "warn"
		}
		text := fmt.Sprintf("$ %s → %s (%s)", it.Command, it.Status, exit)
		if out := strings.TrimRight(it.AggregatedOutput, "\n"); out != "" {
			text += "\n" + out
		}
		return []agent.Message{logMsg(level, capBytes(text, logBytes))}
	case "file_change":
		if it.Status != "completed" {
			return []agent.Message{logMsg("warn", "file change "+it.Status+": "+codexChanges(it))}
		}
		for _, c := range it.Changes {
			if !d.seen[c.Path] {
				d.seen[c.Path] = true
				d.written = append(d.written, c.Path)
			}
		}
		return []agent.Message{logMsg("info", "files changed: "+codexChanges(it))}
	case "mcp_tool_call":
		if it.Error != nil || it.Status == "failed" {
			msg := "failed"
			if it.Error != nil {
				msg = "failed: " + it.Error.Message
			}
			return []agent.Message{logMsg("warn", fmt.Sprintf("MCP %s.%s %s", it.Server, it.Tool, msg))}
		}
		return []agent.Message{logMsg("info", fmt.Sprintf("MCP %s.%s %s", it.Server, it.Tool, it.Status))}
	case "error":
		return []agent.Message{logMsg("warn", "codex: "+capBytes(it.Message, logBytes))}
	case "web_search":
		return []agent.Message{logMsg("info", "web search: "+it.Query)}
	case "todo_list":
		return d.itemStarted(it)
	}
	return nil
}

// codexChanges renders a file_change's paths: "add /w/a.go, update /w/b.go".
func codexChanges(it *codexItem) string {
	parts := make([]string, 0, len(it.Changes))
	for _, c := range it.Changes {
		parts = append(parts, c.Kind+" "+c.Path)
	}
	return strings.Join(parts, ", ")
}

// completed is the result of turn.completed. Codex reports no cost, so CostUSD stays 0 (the
// scheduler prices the tokens with its price table).
func (d *codexDecoder) completed(u *codexUsage) agent.WorkerResult {
	r := agent.WorkerResult{Status: agent.StatusCompleted, Usage: &agent.Usage{}, Artifacts: d.written}
	if u != nil {
		*r.Usage = codexTokens(u)
	}
	r.Summary = capBytes(strings.TrimSpace(d.last), logBytes)
	if r.Summary == "" {
		r.Summary = "codex completed its turn without a final message"
	}
	return r
}

// failed is the result of turn.failed with message msg.
func (d *codexDecoder) failed(msg string) agent.WorkerResult {
	kind := codexFailureKind(msg)
	line, _ := oneLine(msg, progressRunes)
	var summary string
	switch kind {
	case agent.KindAuth:
		summary = "the model API rejected the credentials: " + line
	case agent.KindRateLimit:
		summary = "the model provider's rate limit was hit: " + line + "; the profile waits for the window to reset"
	case agent.KindQuota:
		summary = "the model API refused for quota or billing: " + line
	case agent.KindModel:
		summary = "the model API failed: " + line
	default:
		if line == "" {
			line = "no message"
		}
		summary = "codex turn failed: " + line
	}
	return agent.WorkerResult{Status: agent.StatusFailed, Summary: summary, Failure: &agent.Failure{
		Kind: kind, Tool: "codex", Diagnostic: capBytes(msg, diagnosticBytes), Summary: summary,
	}}
}

func (d *codexDecoder) finish(r agent.WorkerResult) ([]agent.Message, error) {
	if d.result != nil {
		return nil, fmt.Errorf("codex: a second terminal event was ignored: the first one stands")
	}
	d.result = &r
	return []agent.Message{resultMsg(r)}, nil
}

// End returns the terminal event's outcome, or, without turn.completed or turn.failed (SIGTERM
// and SIGINT stop the stream after turn.started), a failure or cancellation.
func (d *codexDecoder) End(exit agent.ExitStatus) agent.WorkerResult {
	if d.result != nil {
		return *d.result
	}
	return endWithoutResult("codex", exit, d.trouble)
}

// Words that classify a Codex error message, matched in its lower-cased text.
var (
	codexAuthWords  = []string{"unauthorized", "forbidden", "invalid api key", "invalid_api_key", "incorrect api key", "missing environment variable", "not logged in", "authentication"}
	codexQuotaWords = []string{"insufficient_quota", "exceeded your current quota", "usage limit", "billing", "credit balance"}
	codexModelWords = []string{"high demand", "overloaded", "internal server error", "bad gateway", "service unavailable", "too many requests", "rate limit", "stream disconnected", "connection", "timed out", "timeout", "reconnecting", "error sending request", "unexpected status"}
)

// codexFailureKind classifies a Codex error message. Codex gives no structured status: a 401
// reads "unexpected status 401 Unauthorized: …", a 500 "We’re currently experiencing high
// demand, …" (agent-clis.md §4). Status codes count only as whole words (not inside a
// request id or a port).
func codexFailureKind(msg string) string {
	m := strings.ToLower(msg)
	codes := httpStatuses(m)
	switch {
	case codes[401] || codes[403] || containsAny(m, codexAuthWords):
		return agent.KindAuth
	case codexRateLimited(m):
		return agent.KindRateLimit
	case containsAny(m, codexQuotaWords):
		return agent.KindQuota // billing: OpenAI answers insufficient_quota with a 429 too
	case codes[429]:
		return agent.KindRateLimit
	case codes[429] || codes[5] || containsAny(m, codexModelWords):
		return agent.KindModel
	}
	return agent.KindError
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// httpStatuses returns the three-digit whole words of s that look like HTTP statuses; any
// 5xx is also recorded under key 5.
func httpStatuses(s string) map[int]bool {
	var out map[int]bool
	for i := 0; i+3 <= len(s); i++ {
		if !isDigit(s[i]) || (i > 0 && isWordByte(s[i-1])) {
			continue
		}
		if !isDigit(s[i+1]) || !isDigit(s[i+2]) || (i+3 < len(s) && isWordByte(s[i+3])) {
			continue
		}
		code := int(s[i]-'0')*100 + int(s[i+1]-'0')*10 + int(s[i+2]-'0')
		if code < 400 || code > 599 {
			continue
		}
		if out == nil {
			out = map[int]bool{}
		}
		out[code] = true
		if code >= 500 {
			out[5] = true
		}
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordByte(c byte) bool {
	return isDigit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
