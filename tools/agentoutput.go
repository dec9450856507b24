package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The agent protocol's message types read here (agent/messages.go; TestReadableLines_KnowsTheProtocolTypes
// pins them). The formatter is shared by the dashboard's output box and watch's log screen.
const (
	outHeartbeat  = "agent.heartbeat"
	outPing       = "agent.ping"
	outProgress   = "task.progress"
	outLog        = "task.log"
	outCheckpoint = "task.checkpoint"
	outYield      = "task.yield"
	outUsage      = "task.usage"
	outRateLimit  = "task.rate_limit"
	outResult     = "worker.result"
)

// logLine is the fields of one line of an agent's stdout that a person reads, whatever the
// runtime wrote it: the agent protocol's messages (type task.progress, task.log,
// worker.result, …), Claude Code's stream-json (assistant text and tool use, result) and
// Codex's exec --json items (agent_message, command_execution).
type logLine struct {
	Type    string          `json:"type"`
	Subtype string          `json:"subtype"`
	Percent *float64        `json:"percent"`
	Message json.RawMessage `json:"message"` // a string (agent protocol) or an object (Claude Code)
	Status  string          `json:"status"`
	Summary string          `json:"summary"`
	Result  string          `json:"result"`
	Reason  string          `json:"reason"` // task.yield's
	Usage   *struct {
		InputTokens  int64   `json:"input_tokens"`
		OutputTokens int64   `json:"output_tokens"`
		CostUSD      float64 `json:"cost_usd"`
	} `json:"usage"` // task.usage's, cumulative
	RateLimit *struct {
		Status    string `json:"status"`
		LimitType string `json:"limit_type"`
		ResetsAt  string `json:"resets_at"`
	} `json:"rate_limit"` // task.rate_limit's
	Item *struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Command string `json:"command"`
	} `json:"item"`
}

type claudeLogMessage struct {
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
}

// ReadableLines turns one stdout line into what a person reads: the message text, a
// "tool NAME …" line per tool use, "progress N%: …", the result; nil for heartbeats and
// pings (noise). A line not understood is shown as it is, JSON compacted.
func ReadableLines(raw string) []string {
	var l logLine
	if json.Unmarshal([]byte(raw), &l) != nil || l.Type == "" {
		return []string{CompactJSON(raw)}
	}
	var text string
	_ = json.Unmarshal(l.Message, &text) // the agent protocol's message is a string
	switch l.Type {
	case outHeartbeat, outPing:
		return nil
	case outProgress:
		if l.Percent != nil {
			return []string{fmt.Sprintf("progress %.0f%%: %s", *l.Percent, text)}
		}
		return []string{"progress: " + text}
	case outLog:
		return []string{text}
	case outCheckpoint:
		return []string{"checkpoint saved: " + text}
	case outYield:
		return []string{yieldText(l.Reason, text)}
	case outUsage:
		if l.Usage != nil {
			return []string{usageText(l.Usage.InputTokens, l.Usage.OutputTokens, l.Usage.CostUSD)}
		}
	case outRateLimit:
		if l.RateLimit != nil {
			return []string{rateLimitText(l.RateLimit.Status, l.RateLimit.LimitType, l.RateLimit.ResetsAt)}
		}
	case outResult:
		return []string{"result " + l.Status + ": " + l.Summary}
	case "assistant":
		return claudeLines(l.Message)
	case "result":
		return []string{"result " + l.Subtype + ": " + l.Result}
	case "item.completed", "item.started":
		if l.Item != nil && l.Item.Type == "command_execution" {
			return []string{"tool shell: " + l.Item.Command}
		}
		if l.Item != nil && l.Item.Text != "" {
			return []string{l.Item.Text}
		}
	}
	return []string{CompactJSON(raw)}
}

// usageText is a task.usage report: what the attempt used so far (the report is cumulative).
func usageText(in, out int64, usd float64) string {
	s := fmt.Sprintf("usage so far: %d tokens in, %d out", in, out)
	if usd > 0 {
		s += fmt.Sprintf(", $%.4f", usd)
	}
	return s
}

// yieldText is a task.yield: the agent stopped early, why (a code) and its own line.
func yieldText(reason, text string) string {
	s := "yielded"
	if reason != "" {
		s += " (" + reason + ")"
	}
	if text != "" {
		s += ": " + text
	}
	return s
}

// rateLimitText is a task.rate_limit report: the provider window's status, which window, and
// when it resets when the agent said.
func rateLimitText(status, window, resets string) string {
	s := "rate limit " + status
	if window != "" {
		s += " (" + window + ")"
	}
	if resets != "" {
		s += ", resets " + resets
	}
	return s
}

// claudeLines is an assistant message of Claude Code's stream-json: its text blocks, and a
// line per tool use with the tool's input, compacted.
func claudeLines(msg json.RawMessage) []string {
	var m claudeLogMessage
	if json.Unmarshal(msg, &m) != nil {
		return []string{CompactJSON(string(msg))}
	}
	var out []string
	for _, c := range m.Content {
		switch c.Type {
		case "text":
			out = append(out, c.Text)
		case "tool_use":
			out = append(out, "tool "+c.Name+": "+CompactJSON(string(c.Input)))
		}
	}
	return out
}

// CompactJSON is s without JSON's insignificant spaces when s is JSON, else s as it is.
func CompactJSON(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(strings.TrimSpace(s))) == nil {
		return b.String()
	}
	return s
}
