package scheduler

import (
	"encoding/json"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// Run modes of an attempt.
const (
	ModeManaged = "managed" // a child process this scheduler launched
	ModePull    = "pull"    // an MCP client that claimed the mission
)

// RunRecord is what the scheduler stores on a mission about its current attempt
// (engine.Mission.Run): where it works and, for managed agents, which process runs it, so a
// restarted scheduler can find it again and land its work.
type RunRecord struct {
	Mode       string             `json:"mode"`
	Attempt    int                `json:"attempt"`
	Profile    string             `json:"profile,omitempty"`
	Runtime    string             `json:"runtime,omitempty"`
	Agent      string             `json:"agent,omitempty"`
	Model      string             `json:"model,omitempty"`
	Worktree   worktree.Workspace `json:"worktree"`
	AttemptDir string             `json:"attempt_dir,omitempty"`
	PID        int                `json:"pid,omitempty"`
	AgentStart string             `json:"agent_start,omitempty"`
	Score      *engine.Score      `json:"score,omitempty"`
	Scores     []engine.Score     `json:"scores,omitempty"`
	PrepareMS  int64              `json:"prepare_ms,omitempty"` // how long the workspace took to make
	LaunchedAt time.Time          `json:"launched_at"`
}

// Workspace returns the record's workspace as the engine and the tools show it.
func (r RunRecord) Workspace() engine.Workspace {
	w := r.Worktree
	return engine.Workspace{Path: w.Path, Branch: w.Branch, BaseCommit: w.BaseCommit,
		Strategy: string(w.Strategy), ReadOnly: w.ReadOnly, Resumed: w.Resumed}
}

func (r RunRecord) raw() json.RawMessage {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // plain data
	}
	return b
}

// runOf decodes a mission's run record (zero when it has none).
func runOf(m *engine.Mission) RunRecord {
	var r RunRecord
	if len(m.Run) > 0 {
		_ = json.Unmarshal(m.Run, &r) // written by this package; an unreadable one reads as absent
	}
	return r
}
