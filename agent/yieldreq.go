package agent

// TypeYieldRequest is agent.yield, scheduler → agent (protocol 1, additive): an urgent mission
// needs the slot, so checkpoint and send task.yield at your next boundary. Agents that do not
// know it ignore it (unknown types are ignored) and simply run on.
const TypeYieldRequest = "agent.yield"

// YieldRequest is agent.yield.
type YieldRequest struct {
	Type   string `json:"type"`
	Reason string `json:"reason,omitempty"`
}
