package adapters

import (
	"errors"
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// usageLine checks a task.usage line of an NDJSON agent: it passes through with nothing but
// its usage, or is a bad line (logged and counted, never fatal; the previous report stands)
// when the usage is missing or out of range.
func usageLine(m agent.Message) ([]agent.Message, error) {
	u, ok := m.ReportedUsage()
	if !ok {
		return nil, errors.New(`ndjson: task.usage without a "usage" object: send {"type":"task.usage","usage":{"input_tokens":N,...}}`)
	}
	if err := u.Check(); err != nil {
		return nil, fmt.Errorf("ndjson: task.usage: %w", err)
	}
	return []agent.Message{agent.UsageMessage(u)}, nil
}
