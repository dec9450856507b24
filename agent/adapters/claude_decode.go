package adapters

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// claudeEvent is one stream-json line, flattened: Type and Subtype say which fields are
// meaningful (agent-clis.md §2, "stream-json events"). Message is raw because it is an
// object for assistant/user events and a string for system/permission_denied.
type claudeEvent struct {
	Type    string          `json:"type"`
	Subtype string          `json:"subtype"`
	Message json.RawMessage `json:"message"`

	// system/init
	Cwd            string `json:"cwd"`
	SessionID      string `json:"session_id"`
	Model          string `json:"model"`
	PermissionMode string `json:"permissionMode"`
	Version        string `json:"claude_code_version"`
	MCPServers     []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"mcp_servers"`

	// system/api_retry (Error and ErrorStatus), assistant API error messages (Error,
	// IsAPIErrorMessage, APIErrorStatus, APIErrorType), result (APIErrorStatus, APIErrorType).
	Attempt           int    `json:"attempt"`
	MaxRetries        int    `json:"max_retries"`
	RetryDelayMs      int64  `json:"retry_delay_ms"`
	ErrorStatus       *int   `json:"error_status"`
	Error             string `json:"error"`
	IsAPIErrorMessage bool   `json:"is_api_error_message"`
	APIErrorStatus    *int   `json:"api_error_status"`
	APIErrorType      string `json:"api_error_type"`

	// system/permission_denied
	ToolName  string `json:"tool_name"`
	ToolUseID string `json:"tool_use_id"`

	// rate_limit_event (claude_ratelimit.go)
	RateLimitInfo json.RawMessage `json:"rate_limit_info"`

	// result
	IsError           bool         `json:"is_error"`
	Result            string       `json:"result"`
	Errors            []string     `json:"errors"`
	TotalCostUSD      float64      `json:"total_cost_usd"`
	Usage             *claudeUsage `json:"usage"`
	TerminalReason    string       `json:"terminal_reason"`
	NumTurns          int          `json:"num_turns"`
	PermissionDenials []struct {
		ToolName  string          `json:"tool_name"`
		ToolUseID string          `json:"tool_use_id"`
		ToolInput claudeToolInput `json:"tool_input"`
	} `json:"permission_denials"`
}

type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

type claudeMessage struct {
	Content claudeContent `json:"content"`
}

// claudeContent is a message's content: an array of blocks, or a bare string (read as one
// text block).
type claudeContent []claudeBlock

func (c *claudeContent) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = claudeContent{{Type: "text", Text: s}}
		return nil
	}
	return json.Unmarshal(b, (*[]claudeBlock)(c))
}

type claudeBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input claudeToolInput `json:"input"`
	// tool_result
	ToolUseID string        `json:"tool_use_id"`
	Content   claudeContent `json:"content"`
	IsError   bool          `json:"is_error"`
}

// claudeToolInput holds the tool inputs worth reporting; the rest is skipped.
type claudeToolInput struct {
	FilePath    string `json:"file_path"`
	Command     string `json:"command"`
	Pattern     string `json:"pattern"`
	URL         string `json:"url"`
	Description string `json:"description"`
}

// UnmarshalJSON reads what it can: a tool input that is not an object, or whose fields have
// other types, leaves fields empty instead of failing the whole event.
func (in *claudeToolInput) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	type plain claudeToolInput
	_ = json.Unmarshal(b, (*plain)(in)) // partial reads are fine: these fields only describe
	return nil
}

type claudeDecoder struct {
	result   *agent.WorkerResult
	aborted  *claudeEvent // a result event that only reports an interruption
	trouble  apiTrouble
	apiError *claudeEvent      // the last assistant API error message
	pending  map[string]string // tool_use id → file it writes
	written  []string          // files written by successful tool calls, in order
	seen     map[string]bool   // written, as a set
	denials  *claudeDenials    // tool calls refused under the permission settings
	rate     rateState         // the usage window (claude_ratelimit.go)
	usage    claudeUsageTracker
}

func newClaudeDecoder() *claudeDecoder {
	return &claudeDecoder{pending: map[string]string{}, seen: map[string]bool{}, denials: newClaudeDenials(), rate: newRateState()}
}

// Line maps one stream-json event (see docs/agents.md for the table).
func (d *claudeDecoder) Line(line []byte) ([]agent.Message, error) {
	if err := agent.CheckJSONUTF8(line); err != nil {
		return nil, fmt.Errorf("claude-code: protocol error: %w", err)
	}
	var ev claudeEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil, fmt.Errorf("claude-code: not a stream-json event: %w", err)
	}
	switch ev.Type {
	case "system":
		return d.system(&ev), nil
	case "assistant":
		return d.assistant(&ev)
	case "user":
		return d.user(&ev)
	case "result":
		return d.finish(&ev)
	case "rate_limit_event":
		return d.rateLimitEvent(ev.RateLimitInfo), nil
	case "":
		return nil, fmt.Errorf(`claude-code: an event without "type"`)
	}
	return nil, nil // stream_event (partial messages) and future types carry nothing we need
}

func (d *claudeDecoder) system(ev *claudeEvent) []agent.Message {
	switch ev.Subtype {
	case "init":
		d.denials.mode = ev.PermissionMode
		out := []agent.Message{logMsg("info", fmt.Sprintf(
			"claude-code %s started: model %s, permission mode %s, session %s, cwd %s",
			ev.Version, ev.Model, ev.PermissionMode, ev.SessionID, ev.Cwd))}
		for _, s := range ev.MCPServers {
			if s.Status != "connected" {
				out = append(out, logMsg("warn", fmt.Sprintf("MCP server %s: %s", s.Name, s.Status)))
			}
		}
		return out
	case "api_retry":
		status := "no HTTP status"
		if ev.ErrorStatus != nil {
			status = fmt.Sprintf("HTTP %d", *ev.ErrorStatus)
		}
		diag := fmt.Sprintf("model API error (%s, %s)", status, ev.Error)
		if claudeAuthFailure(ev.ErrorStatus, ev.Error) {
			d.trouble.auth = diag
		} else {
			d.trouble.model = diag
		}
		return append([]agent.Message{logMsg("warn", fmt.Sprintf("%s; retry %d of %d in %d ms",
			diag, ev.Attempt, ev.MaxRetries, ev.RetryDelayMs))}, d.retryRateLimit(ev)...)
	case "permission_denied":
		var msg string
		_ = json.Unmarshal(ev.Message, &msg) // a non-string message leaves msg empty
		d.denials.add(ev.ToolUseID, ev.ToolName, claudeToolInput{}, msg)
		return []agent.Message{logMsg("warn", fmt.Sprintf("permission denied for tool %s: %s", ev.ToolName, msg))}
	}
	return nil // status (partial messages) and future subtypes
}

func (d *claudeDecoder) assistant(ev *claudeEvent) ([]agent.Message, error) {
	var msg claudeMessage
	if err := json.Unmarshal(ev.Message, &msg); err != nil {
		return nil, fmt.Errorf("claude-code: assistant message: %w", err)
	}
	if ev.IsAPIErrorMessage || ev.Error != "" {
		diag := strings.TrimSpace(msg.text())
		if api := claudeAPIStatus(ev.APIErrorStatus, ev.APIErrorType); api != "" {
			diag += " (" + api + ")"
		}
		if claudeAuthFailure(ev.APIErrorStatus, ev.Error) {
			d.trouble.auth = diag
		} else {
			d.trouble.model = diag
		}
		e := *ev
		d.apiError = &e
		return []agent.Message{logMsg("error", "model API error: "+diag)}, nil
	}
	out := d.usage.observe(ev.Message)
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			out = append(out, textEvents(b.Text)...)
		case "tool_use":
			d.denials.called(b)
			if claudeFileTools[b.Name] && b.Input.FilePath != "" {
				d.pending[b.ID] = b.Input.FilePath
			}
			out = append(out, progressMsg(claudeTool(b.Name, b.Input)))
		}
	}
	return out, nil
}

func (d *claudeDecoder) user(ev *claudeEvent) ([]agent.Message, error) {
	var msg claudeMessage
	if err := json.Unmarshal(ev.Message, &msg); err != nil {
		return nil, fmt.Errorf("claude-code: user message: %w", err)
	}
	var out []agent.Message
	for _, b := range msg.Content {
		switch b.Type {
		case "tool_result":
			level, verdict := "info", "ok"
			if b.IsError {
				level, verdict = "warn", "error"
			} else if path, ok := d.pending[b.ToolUseID]; ok && !d.seen[path] {
				d.seen[path] = true
				d.written = append(d.written, path)
			}
			delete(d.pending, b.ToolUseID)
			d.denials.answered(b.ToolUseID)
			out = append(out, logMsg(level, capBytes(fmt.Sprintf("tool result (%s): %s", verdict,
				strings.TrimSpace(b.Content.text())), logBytes)))
		case "text":
			out = append(out, logMsg("warn", capBytes(strings.TrimSpace(b.Text), logBytes)))
		}
	}
	return out, nil
}

// finish maps the result event: success is decided by is_error, never by subtype (an API
// failure reports subtype "success" with is_error true).
func (d *claudeDecoder) finish(ev *claudeEvent) ([]agent.Message, error) {
	if d.result != nil || d.aborted != nil {
		return nil, fmt.Errorf("claude-code: a second result event was ignored: the first one stands")
	}
	if ev.IsError && strings.HasPrefix(ev.TerminalReason, "aborted") {
		// SIGINT mid-request may still print a result (subtype error_during_execution,
		// terminal_reason aborted_streaming). It is no report of the agent's: End decides,
		// knowing whether the scheduler stopped it.
		e := *ev
		d.aborted = &e
		return []agent.Message{logMsg("warn", "claude-code was interrupted ("+ev.TerminalReason+")")}, nil
	}
	r := agent.WorkerResult{Usage: claudeUsageOf(ev)}
	var out []agent.Message
	if len(ev.PermissionDenials) > 0 {
		names := make([]string, 0, len(ev.PermissionDenials))
		for _, p := range ev.PermissionDenials {
			names = append(names, p.ToolName)
			d.denials.add(p.ToolUseID, p.ToolName, p.ToolInput, "")
		}
		out = append(out, logMsg("warn", fmt.Sprintf("%d tool call(s) were denied: %s",
			len(names), strings.Join(names, ", "))))
	}
	if !ev.IsError {
		r.Status = agent.StatusCompleted
		r.Summary = capBytes(strings.TrimSpace(ev.Result), logBytes)
		if r.Summary == "" {
			r.Summary = fmt.Sprintf("claude-code completed in %d turn(s) without a final message", ev.NumTurns)
		}
		r.Artifacts = d.written
	} else {
		r.Status = agent.StatusFailed
		r.Failure = d.classify(ev)
		r.Summary = r.Failure.Summary
		if r.Failure.Kind == agent.KindRateLimit {
			out = append(out, d.rate.finalRateLimit(ev.Result, "claude-code")...)
		}
	}
	r = d.denials.deniedResult(r, ev.Result)
	d.result = &r
	return append(out, resultMsg(r)), nil
}

// classify names the failure of a result with is_error: auth for rejected credentials (an
// environment failure: the mission blocks), quota for billing, model for other API failures
// (5xx, 529 overloaded, connection refused), error for everything else (max turns, ...).
func (d *claudeDecoder) classify(ev *claudeEvent) *agent.Failure {
	text := strings.TrimSpace(ev.Result)
	if len(ev.Errors) > 0 {
		text = strings.TrimSpace(strings.Join(append([]string{text}, ev.Errors...), "; "))
		text = strings.TrimPrefix(text, "; ")
	}
	status, errType, errName := ev.APIErrorStatus, ev.APIErrorType, ""
	if a := d.apiError; a != nil {
		errName = a.Error
		if status == nil {
			status = a.APIErrorStatus
		}
		if errType == "" {
			errType = a.APIErrorType
		}
	}
	line, _ := oneLine(text, progressRunes)
	api := claudeAPIStatus(status, errType)
	f := &agent.Failure{Tool: "claude-code", Diagnostic: capBytes(text, diagnosticBytes)}
	switch {
	case claudeAuthFailure(status, errName) || errType == "authentication_error" || errType == "permission_error" ||
		(status == nil && errName == "" && d.trouble.auth != ""):
		f.Kind = agent.KindAuth
		f.Summary = fmt.Sprintf("the model API rejected the credentials (%s): %s", api, line)
	case claudeRateLimited(status, errType, errName) || hitLimitText(text):
		f.Kind = agent.KindRateLimit
		if api == "" {
			api = "usage window exhausted"
		}
		f.Summary = fmt.Sprintf("the model provider's rate limit was hit (%s): %s; the profile waits for the window to reset", api, line)
	case errName == "billing_error" || errType == "billing_error":
		f.Kind = agent.KindQuota
		f.Summary = fmt.Sprintf("the model API refused for billing or quota (%s): %s", api, line)
	case ev.TerminalReason == "api_error" || status != nil || d.apiError != nil:
		f.Kind = agent.KindModel
		if api == "" {
			api = "no HTTP status"
		}
		f.Summary = fmt.Sprintf("the model API failed (%s): %s", api, line)
	case ev.Subtype == "error_max_turns" || ev.TerminalReason == "max_turns":
		f.Kind = agent.KindError
		f.Summary = "claude-code stopped at its turn limit: " + line
	default:
		f.Kind = agent.KindError
		if line == "" {
			line = fmt.Sprintf("no message (subtype %s, terminal reason %s)", ev.Subtype, ev.TerminalReason)
		}
		f.Summary = "claude-code failed: " + line
	}
	return f
}

// End returns the result event's outcome, or, without one, a failure (or cancellation when
// the scheduler stopped it) whatever the exit code: SIGINT makes Claude Code exit 0 with no
// result, or with an "aborted" one (agent-clis.md §2, "Error cases").
func (d *claudeDecoder) End(exit agent.ExitStatus) agent.WorkerResult {
	if d.result != nil {
		return *d.result
	}
	if d.aborted != nil {
		r := endWithoutResult("claude-code (interrupted: "+d.aborted.TerminalReason+")", exit, d.trouble)
		r.Usage = claudeUsageOf(d.aborted)
		return d.denials.deniedResult(r, "")
	}
	return d.denials.deniedResult(endWithoutResult("claude-code", exit, d.trouble), "")
}

// claudeUsageOf reads a result event's usage: input counts every input token the model read
// (uncached, cache writes and cache reads; the cache parts also on their own), output the
// output tokens, cost total_cost_usd.
func claudeUsageOf(ev *claudeEvent) *agent.Usage {
	u := &agent.Usage{}
	if x := ev.Usage; x != nil {
		*u = claudeTokens(x)
	}
	u.CostUSD = ev.TotalCostUSD
	return u
}

// claudeAuthFailure reports whether an API error means the credentials were rejected.
func claudeAuthFailure(status *int, errName string) bool {
	if status != nil && (*status == 401 || *status == 403) {
		return true
	}
	return errName == "authentication_failed"
}

// text joins the text of a content's text blocks.
func (c claudeContent) text() string {
	var parts []string
	for _, b := range c {
		if b.Type == "text" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (m claudeMessage) text() string { return m.Content.text() }
