package tools

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Deps are the services the tools call. The engine is required; cmd/mcp-scheduler wires the
// others from the worktree manager and the runner's attempt files.
type Deps struct {
	// Engine applies every mission rule and owns the state (required).
	Engine *engine.Engine
	// Pull claims pull-mode work with its workspace and completes it (cmd wires the
	// scheduler's pull service). nil: claim_mission answers with a server error saying
	// workspaces are not configured, and complete_mission completes through the engine alone
	// (a server without workspaces has none to check).
	Pull Pull
	// Workspaces computes diffs. nil: get_mission_diff answers with a server error saying
	// workspaces are not configured.
	Workspaces Workspaces
	// Logs reads attempt logs. nil: get_mission_log returns the mission's events only.
	Logs Logs
	// Logger receives the server's own records (never stdout).
	Logger *slog.Logger
	// DefaultRetryBudget, when set, is the retry budget of missions that name none
	// (configuration key scheduler.retry_budget; the engine's own default is 3).
	DefaultRetryBudget *int
	// WaitProgress is the longest a waiting tool (dispatch with wait_seconds) stays silent
	// when the client sent a progress token: it repeats its last progress notification at
	// least this often. 0 means DefaultWaitProgress (15 s); tests use a fraction of a second.
	WaitProgress time.Duration

	status *statusCache // set by New
}

// Pull is the pull-mode side the tools need: the tools call it and it calls the engine and
// the workspace manager, never the other way (cmd wires the scheduler's PullService).
type Pull interface {
	// Claim waits up to req.Wait for a runnable mission, acquires and starts it for
	// req.AgentID, creates its workspace while the lease is kept alive, and hands it over.
	// Errors: ErrNoWork (whose message, when it is not the bare sentinel, says why nothing fits;
	// an *engine.ClaimLostError when missions were taken away while their
	// workspaces were made), ErrPaused, a *domain.FieldError, an *engine.ClaimError (the
	// workspace could not be made; the attempt was failed), ctx's error (the attempt was
	// abandoned).
	Claim(ctx context.Context, req engine.ClaimRequest) (engine.Claimed, error)
	// Complete records the attempt f as completed with res once its work is known to exist:
	// a *domain.WorkspaceLostError (nothing written) when its writable workspace was deleted
	// before its work was committed; otherwise the engine's Complete errors.
	Complete(ctx context.Context, f domain.Fence, res domain.WorkerResult) (domain.Mission, error)
	// Fail records the attempt f as failed (the engine's Fail and its errors); a failure of
	// kind rate_limit also pauses the agent's limit group until rl's reset (rl nil: reset
	// unknown, backoff), so that its claims are refused until then.
	Fail(ctx context.Context, f domain.Fence, req engine.FailRequest, rl *agent.RateLimit) (domain.Mission, error)
}

// Workspaces is the workspace side the tools need (cmd wires one built on worktree.Manager).
type Workspaces interface {
	// Diff returns what m's latest attempt changed relative to the commit its workspace
	// started from. ErrNoWorkspace when the mission has no workspace yet.
	Diff(ctx context.Context, m domain.Mission) (Diff, error)
}

// ErrNoWorkspace: the mission has no workspace (never started, or a strategy without one).
// get_mission_diff answers it as a caller error.
var ErrNoWorkspace = errors.New("the mission has no workspace yet")

// Diff is what an attempt changed.
type Diff struct {
	// Base and Head are the compared commits (Head is the attempt branch's tip).
	Base string `json:"base"`
	Head string `json:"head"`
	// Branch is the attempt's branch.
	Branch string `json:"branch,omitempty"`
	// Files lists every changed file, sorted by path.
	Files []DiffFile `json:"files"`
	// Patch is a unified diff, cut at MaxPatchBytes (Truncated says so).
	Patch     string `json:"patch"`
	Truncated bool   `json:"truncated,omitempty"`
	// Uncommitted is true when the workspace also holds changes not committed yet (they
	// are not in Patch).
	Uncommitted bool `json:"uncommitted,omitempty"`
}

// DiffFile is one changed file.
type DiffFile struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"`
	Action  string `json:"action" jsonschema:"added, modified, deleted or renamed"`
}

// Logs reads what an attempt's agent wrote.
type Logs interface {
	// AttemptLog returns the last tailBytes of the agent's stdout and stderr for one attempt
	// of m (attempt ≥ 1). ErrNoLog when the attempt left no files (pull-mode attempts have
	// none: their agent reports through tools).
	AttemptLog(ctx context.Context, m domain.Mission, attempt int, tailBytes int) (AttemptLog, error)
}

// ErrNoLog: the attempt has no log files.
var ErrNoLog = errors.New("no log files for this attempt")

// AttemptLog is the tail of one attempt's output files.
type AttemptLog struct {
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// StdoutBytes and StderrBytes are the files' full sizes; Truncated is true when only
	// the tail is returned.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes"`
	Truncated   bool  `json:"truncated,omitempty"`
	// Exit is the agent's exit record when it ended (JSON written by the shim).
	Exit json.RawMessage `json:"exit,omitempty"`
}

// waitProgress is WaitProgress or its default.
func (d *Deps) waitProgress() time.Duration {
	if d.WaitProgress > 0 {
		return d.WaitProgress
	}
	return DefaultWaitProgress
}
