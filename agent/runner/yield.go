package runner

import "github.com/mcp-scheduler/mcp-scheduler/agent"

// RequestYield asks an ndjson agent launched by this Runner to checkpoint and yield at its
// next boundary (agent.yield on its stdin). It reports false when the agent has no protocol
// stdin (CLI runtimes, re-attached agents): such agents cannot be asked and run on.
func (p *Process) RequestYield(reason string) bool {
	if p.stdin == nil {
		return false
	}
	return p.stdin.send(agent.YieldRequest{Type: agent.TypeYieldRequest, Reason: reason})
}

// CanYield reports whether RequestYield can reach the agent.
func (p *Process) CanYield() bool { return p.stdin != nil }
