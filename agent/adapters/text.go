package adapters

import (
	"strings"
	"unicode/utf8"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// Limits for text copied from an agent's output into events.
const (
	// progressRunes caps a task.progress line (one line for people).
	progressRunes = 200
	// logBytes caps a task.log body built from tool output or results.
	logBytes = 4096
	// diagnosticBytes caps Failure.Diagnostic.
	diagnosticBytes = 2048
)

// oneLine collapses s to its first non-blank line, capped at max runes with "…" appended when
// anything was cut (a later line or the tail of this one). cut reports whether it was.
func oneLine(s string, max int) (line string, cut bool) {
	s = strings.TrimSpace(s)
	first, rest, multi := strings.Cut(s, "\n")
	first = strings.TrimSpace(first)
	cut = multi && strings.TrimSpace(rest) != ""
	if utf8.RuneCountInString(first) > max {
		n := 0
		for i := range first {
			if n == max {
				first = first[:i]
				break
			}
			n++
		}
		cut = true
	}
	if cut {
		first += "…"
	}
	return first, cut
}

// capBytes cuts s to at most max bytes on a rune boundary, appending "…" when it cut.
func capBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// textEvents turns a piece of agent prose into a task.progress (its first line, short) and,
// when that line had to be cut, a task.log carrying the whole text.
func textEvents(text string) []agent.Message {
	line, cut := oneLine(text, progressRunes)
	if line == "" {
		return nil
	}
	out := []agent.Message{{Type: agent.TypeProgress, Message: line}}
	if cut {
		out = append(out, logMsg("info", capBytes(strings.TrimSpace(text), logBytes)))
	}
	return out
}

// logMsg is a task.log message.
func logMsg(level, text string) agent.Message {
	return agent.Message{Type: agent.TypeLog, Level: level, Message: text}
}

// progressMsg is a task.progress message without a percentage.
func progressMsg(text string) agent.Message {
	line, _ := oneLine(text, progressRunes)
	return agent.Message{Type: agent.TypeProgress, Message: line}
}

// resultMsg wraps a final result as the worker.result message a decoder emits when the
// stream reports its end, so the runner learns it before the process exits. The message owns
// a deep copy: whatever its receiver does to it, End still returns the decoder's own.
func resultMsg(r agent.WorkerResult) agent.Message {
	c := cloneResult(r)
	return agent.Message{Type: agent.TypeResult, WorkerResult: &c}
}

// cloneResult copies r and everything it points to.
func cloneResult(r agent.WorkerResult) agent.WorkerResult {
	if r.Failure != nil {
		f := *r.Failure
		r.Failure = &f
	}
	if r.Usage != nil {
		u := *r.Usage
		r.Usage = &u
	}
	r.Artifacts = append([]string(nil), r.Artifacts...)
	r.Evidence = append([]string(nil), r.Evidence...)
	r.Findings = append([]agent.Finding(nil), r.Findings...)
	return r
}
