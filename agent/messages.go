// Package agent defines the NDJSON protocol spoken between mcp-scheduler and a managed
// agent: one JSON object per line, UTF-8, "\n" terminated (docs/protocol.md is the normative
// description, with a JSON Schema per message).
//
// Every message is a flat JSON object whose "type" member names it. Unknown members and
// unknown types are ignored by both sides, never fatal, so either side can be newer than the
// other. Version is the protocol version carried by agent.start.
//
// Scheduler → agent (the agent's stdin, runtime "ndjson" only): agent.start, agent.ping,
// agent.cancel. EOF on stdin means the scheduler went away, not "stop".
//
// Agent → scheduler (the agent's stdout): agent.heartbeat, task.progress, task.log,
// task.checkpoint, task.yield, task.usage, worker.result.
package agent

import "encoding/json"

// Version is the protocol version this package speaks; agent.start carries it.
const Version = "1"

// Message types, scheduler → agent.
const (
	TypeStart  = "agent.start"
	TypePing   = "agent.ping"
	TypeCancel = "agent.cancel"
	// TypeYieldRequest is agent.yield: an urgent mission needs the slot, so checkpoint and
	// send task.yield at your next boundary. Agents that ignore it simply run on.
	TypeYieldRequest = "agent.yield"
)

// Message types, agent → scheduler.
const (
	TypeHeartbeat  = "agent.heartbeat"
	TypeProgress   = "task.progress"
	TypeLog        = "task.log"
	TypeCheckpoint = "task.checkpoint"
	TypeYield      = "task.yield"
	TypeResult     = "worker.result"
	// TypeUsage is task.usage: what the attempt consumed so far, cumulative (see UsageMessage).
	TypeUsage = "task.usage"
)

// Start is agent.start: everything an agent needs to begin (or resume) one attempt.
// Checkpoint is the opaque JSON the previous attempt saved with task.checkpoint or
// task.yield; it is absent on a fresh attempt.
type Start struct {
	Type               string   `json:"type"`
	Protocol           string   `json:"protocol"`
	MissionID          string   `json:"mission_id"`
	Attempt            int      `json:"attempt"`
	Epoch              int64    `json:"epoch"`
	Title              string   `json:"title"`
	Brief              string   `json:"brief"`
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty"`
	WriteArea          []string `json:"write_area,omitempty"`
	Workspace          string   `json:"workspace"`
	Branch             string   `json:"branch,omitempty"`
	BaseCommit         string   `json:"base_commit,omitempty"`
	Persona            string   `json:"persona,omitempty"`
	// Kind says why the mission exists: work, review, repair, debug, verify or architect;
	// SubjectID is the mission a review, repair, debug or verify mission is about.
	Kind       string          `json:"kind,omitempty"`
	SubjectID  string          `json:"subject_id,omitempty"`
	Model      string          `json:"model,omitempty"`
	Checkpoint json.RawMessage `json:"checkpoint,omitempty"`
}

// Ping is agent.ping: the scheduler's soft-timeout nudge. An agent answers with any message
// (agent.heartbeat is enough).
type Ping struct {
	Type string `json:"type"`
	Seq  int64  `json:"seq,omitempty"`
}

// Cancel is agent.cancel: stop soon, report worker.result with status "cancelled" if you can.
// The scheduler follows up with SIGTERM to the process group, then SIGKILL after the grace
// period.
type Cancel struct {
	Type   string `json:"type"`
	Reason string `json:"reason,omitempty"`
}

// YieldRequest is agent.yield (see TypeYieldRequest).
type YieldRequest struct {
	Type   string `json:"type"`
	Reason string `json:"reason,omitempty"`
}

// Message is any agent → scheduler line, decoded into one flat struct: Type says which
// fields are meaningful. A flat struct keeps parsing at one json.Unmarshal per line.
type Message struct {
	Type string `json:"type"`

	// task.progress
	Percent *float64 `json:"percent,omitempty"` // 0..100
	// task.progress, task.log, task.checkpoint, task.yield: a human-readable line.
	Message string `json:"message,omitempty"`
	// task.log: debug | info | warn | error (default info).
	Level string `json:"level,omitempty"`
	// task.checkpoint, task.yield: opaque JSON handed to the next attempt.
	Checkpoint json.RawMessage `json:"checkpoint,omitempty"`
	// task.yield: why the agent stops early ("preempted", "children", ...).
	Reason string `json:"reason,omitempty"`

	// task.rate_limit: the provider's usage window (nil for every other type).
	RateLimit *RateLimit `json:"rate_limit,omitempty"`

	// worker.result: the final report (nil for every other type).
	*WorkerResult
}

// Result statuses of worker.result.
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusBlocked   = "blocked"
	StatusCancelled = "cancelled"
)

// Review verdicts a reviewer's worker.result carries.
const (
	VerdictApproved     = "approved"
	VerdictMinor        = "minor"
	VerdictSevere       = "severe"
	VerdictInsufficient = "insufficient"
)

// WorkerResult is the body of worker.result, and the result a pull-mode agent reports with
// complete_mission or fail_mission. Status is one of the Status constants. Failure is set when
// Status is failed or blocked. Verdict and Findings are set by reviewers only.
type WorkerResult struct {
	Status    string    `json:"status,omitempty"`
	Summary   string    `json:"summary,omitempty"`
	Artifacts []string  `json:"artifacts,omitempty"`
	Evidence  []string  `json:"evidence,omitempty"`
	Failure   *Failure  `json:"failure,omitempty"`
	Usage     *Usage    `json:"usage,omitempty"`
	Verdict   string    `json:"verdict,omitempty"`
	Findings  []Finding `json:"findings,omitempty"`
	// Decision is what a blocked agent needs decided (status blocked only).
	Decision string `json:"decision,omitempty"`
}

// Failure describes why an attempt failed. Kind classifies it; the environment kinds
// (KindAuth, KindMissingToolchain, KindQuota, KindPermission) mean retrying cannot help.
// Tool is the tool or command that failed, Diagnostic its message, Location a file:line or
// similar, Summary one line for people.
type Failure struct {
	Kind       string `json:"kind"`
	Tool       string `json:"tool,omitempty"`
	Diagnostic string `json:"diagnostic,omitempty"`
	Location   string `json:"location,omitempty"`
	Summary    string `json:"summary,omitempty"`
}

// Failure kinds. Agents may send others; unknown kinds are treated as KindError.
const (
	KindError            = "error"             // a generic implementation failure
	KindTest             = "test"              // tests or checks failed
	KindBuild            = "build"             // the build failed
	KindTimeout          = "timeout"           // the attempt ran out of time
	KindCrash            = "crash"             // the agent process died without a result
	KindProtocol         = "protocol"          // the agent broke the protocol (bad result)
	KindModel            = "model"             // the model API failed (5xx, overload)
	KindAuth             = "auth"              // environment: credentials rejected
	KindMissingToolchain = "missing_toolchain" // environment: a required program is absent
	KindQuota            = "quota"             // environment: quota or budget exhausted
	KindPermission       = "permission"        // environment: not allowed to do this
	KindBudget           = "budget"            // a hard budget (tokens, dollars, wall time) was crossed
)

// Usage is what an attempt consumed. Tokens are counts; CostUSD is in US dollars.
// InputTokens counts every input token the model read; CacheReadTokens and CacheWriteTokens
// are the parts of it read from and written to the provider's prompt cache (priced apart).
type Usage struct {
	InputTokens      int64   `json:"input_tokens,omitempty"`
	OutputTokens     int64   `json:"output_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd,omitempty"`
	CacheReadTokens  int64   `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64   `json:"cache_write_tokens,omitempty"`
}

// Finding is one reviewer remark: Severity is minor | severe, Path and Line locate it.
type Finding struct {
	Severity string `json:"severity,omitempty"`
	Path     string `json:"path,omitempty"`
	Line     int    `json:"line,omitempty"`
	Message  string `json:"message"`
}

// EnvironmentKind reports whether a failure kind means the environment cannot do the work
// (credentials, toolchain, quota, permission): such failures block with an escalation
// instead of burning retries (design brief §2).
func EnvironmentKind(kind string) bool {
	switch kind {
	case KindAuth, KindMissingToolchain, KindQuota, KindPermission:
		return true
	}
	return false
}
