package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// Run modes of an attempt.
const (
	ModeManaged = "managed" // a child process this scheduler launched
	ModePull    = "pull"    // an MCP client that claimed the mission
)

// RunRecord is what the scheduler stores on a mission about its current attempt
// (engine.Mission.Run): for managed agents, which process runs it, so a restarted scheduler
// can find it again and land its work. Where it works is the attempt's workspace record
// (engine.WorkspaceRecord), stored beside it by SetRun and read back into Worktree by
// runWith; the JSON does not repeat it.
type RunRecord struct {
	Mode    string `json:"mode"`
	Attempt int    `json:"attempt"`
	Profile string `json:"profile,omitempty"`
	Runtime string `json:"runtime,omitempty"`
	Agent   string `json:"agent,omitempty"`
	// AuthenticatedBy is the name of the bearer token a pull-mode claim came with (the
	// authenticated agent; Agent is the agent_id it claimed under).
	AuthenticatedBy string             `json:"authenticated_by,omitempty"`
	Model           string             `json:"model,omitempty"`
	Worktree        worktree.Workspace `json:"-"` // from the workspace record, not the run JSON
	AttemptDir      string             `json:"attempt_dir,omitempty"`
	PID             int                `json:"pid,omitempty"`
	AgentStart      string             `json:"agent_start,omitempty"`
	Score           *domain.Score      `json:"score,omitempty"`
	Scores          []domain.Score     `json:"scores,omitempty"`
	PrepareMS       int64              `json:"prepare_ms,omitempty"` // how long the workspace took to make
	LaunchedAt      time.Time          `json:"launched_at"`
	// RemoteURL is Worktree.RemoteURL, kept in the run JSON (the workspace record has no
	// column for it): the remote holding a remote-branch attempt's branch.
	RemoteURL string `json:"remote_url,omitempty"`
}

// Workspace returns the record's workspace as the engine stores it and the tools show it.
func (r RunRecord) Workspace() engine.Workspace {
	w := r.Worktree
	return engine.Workspace{Path: w.Path, Branch: w.Branch, BaseCommit: w.BaseCommit,
		Strategy: string(w.Strategy), ReadOnly: w.ReadOnly, Resumed: w.Resumed, RepoID: w.RepoID,
		TargetBranch: w.TargetBranch, RemoteURL: w.RemoteURL, Notes: w.Notes}
}

// workspace is the workspace to record with the run record (nil when it has none).
func (r RunRecord) workspace() *engine.Workspace {
	if r.Worktree.Path == "" {
		return nil
	}
	ws := r.Workspace()
	return &ws
}

// fromRecord is the worktree manager's view of a stored workspace record.
func fromRecord(w engine.WorkspaceRecord) worktree.Workspace {
	return worktree.Workspace{Path: w.Path, Branch: w.Branch, BaseCommit: w.BaseCommit,
		Strategy: worktree.Strategy(w.Strategy), ReadOnly: w.ReadOnly, Resumed: w.Resumed, RepoID: w.RepoID,
		MissionID: w.MissionID, Attempt: w.Attempt, TargetBranch: w.TargetBranch, CreatedAt: w.CreatedAt, Notes: w.Notes}
}

// runWith is runWith with the scheduler's engine.
func (s *Scheduler) runWith(ctx context.Context, m *domain.Mission) (RunRecord, error) {
	return runWith(ctx, s.eng, m)
}

// runWith decodes m's run record and reads the workspace of its attempt (m's current one
// when the record names none) from the store: zero when none was recorded.
func runWith(ctx context.Context, eng *engine.Engine, m *domain.Mission) (RunRecord, error) {
	r := runOf(m)
	attempt := r.Attempt
	if attempt == 0 {
		attempt = m.Attempt
	}
	if attempt == 0 {
		return r, nil
	}
	w, err := eng.Workspace(ctx, m.ID, attempt)
	if errors.Is(err, domain.ErrNotFound) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("workspace of %s attempt %d: %w", m.ID, attempt, err)
	}
	r.Worktree = fromRecord(w)
	r.Worktree.RemoteURL = r.RemoteURL
	return r, nil
}

func (r RunRecord) raw() json.RawMessage {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // plain data
	}
	return b
}

// runOf decodes a mission's run record (zero when it has none).
func runOf(m *domain.Mission) RunRecord {
	var r RunRecord
	if len(m.Run) > 0 {
		_ = json.Unmarshal(m.Run, &r) // written by this package; an unreadable one reads as absent
	}
	return r
}
