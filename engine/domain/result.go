package domain

// WorkerResult is an attempt's final report as the engine stores it: what a managed agent's
// worker.result said, or what a pull-mode agent sent with complete_mission / fail_mission,
// converted from the agent protocol's wire shape at the boundary (ResultFromWire). Status is
// one of the Result constants; Failure is set when Status is failed or blocked; Verdict and
// Findings are set by reviewers only. Stored as JSON on the mission row (missions.result):
// the tags are the stored format.
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

// Result statuses.
const (
	ResultCompleted = "completed"
	ResultFailed    = "failed"
	ResultBlocked   = "blocked"
	ResultCancelled = "cancelled"
)

// Review verdicts.
const (
	VerdictApproved     = "approved"
	VerdictMinor        = "minor"
	VerdictSevere       = "severe"
	VerdictInsufficient = "insufficient"
)

// Failure classifies why an attempt failed. Kind is one of the Failure* kinds (others are
// kept as sent and treated as FailureError); Tool is the tool or command that failed,
// Diagnostic its message, Location a file:line or similar, Summary one line for people.
// Stored as JSON (missions.last_failure, attempts.failure).
type Failure struct {
	Kind       string `json:"kind"`
	Tool       string `json:"tool,omitempty"`
	Diagnostic string `json:"diagnostic,omitempty"`
	Location   string `json:"location,omitempty"`
	Summary    string `json:"summary,omitempty"`
}

// Failure kinds. The environment kinds (auth, missing_toolchain, quota, permission) mean
// retrying cannot help (EnvironmentFailure).
const (
	FailureError            = "error"             // a generic implementation failure
	FailureTest             = "test"              // tests or checks failed
	FailureBuild            = "build"             // the build failed
	FailureTimeout          = "timeout"           // the attempt ran out of time
	FailureCrash            = "crash"             // the agent process died without a result
	FailureProtocol         = "protocol"          // the agent broke the protocol (bad result)
	FailureModel            = "model"             // the model API failed (5xx, overload)
	FailureAuth             = "auth"              // environment: credentials rejected
	FailureMissingToolchain = "missing_toolchain" // environment: a required program is absent
	FailureQuota            = "quota"             // environment: quota or budget exhausted
	FailurePermission       = "permission"        // environment: not allowed to do this
	FailureWorkspace        = "workspace"         // the attempt's workspace could not be made or was lost
	// FailureRateLimit: the provider's usage window was exhausted. It spends no retry budget:
	// the mission waits for its profile's window to reset (engine/ratelimit.go).
	FailureRateLimit = "rate_limit"
	// FailureBudget: a hard budget (mission, voyage or profile-day; tokens, dollars or wall
	// time) was crossed and the scheduler stopped the agent. It blocks with an escalation
	// that shows the spend and the limit and spends no retry: only a raised limit helps.
	FailureBudget = "budget"
)

// EnvironmentFailure reports whether a failure kind means the environment cannot do the work
// (credentials, toolchain, quota, permission): such failures block with an escalation
// instead of burning retries (design brief §2).
func EnvironmentFailure(kind string) bool {
	switch kind {
	case FailureAuth, FailureMissingToolchain, FailureQuota, FailurePermission:
		return true
	}
	return false
}

// Usage is what an attempt consumed: token counts and cost in US dollars. InputTokens counts
// every input token; CacheReadTokens and CacheWriteTokens are the parts of it read from and
// written to the prompt cache (kept for attempts in flight and daily spend, where the price
// table needs them; a mission's and a voyage's totals keep input, output and cost only).
type Usage struct {
	InputTokens      int64   `json:"input_tokens,omitempty"`
	OutputTokens     int64   `json:"output_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd,omitempty"`
	CacheReadTokens  int64   `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64   `json:"cache_write_tokens,omitempty"`
}

// Tokens is every token counted: input (cached included) and output.
func (u Usage) Tokens() int64 { return u.InputTokens + u.OutputTokens }

// Finding is one reviewer remark: Severity is minor | severe, Path and Line locate it.
type Finding struct {
	Severity string `json:"severity,omitempty"`
	Path     string `json:"path,omitempty"`
	Line     int    `json:"line,omitempty"`
	Message  string `json:"message"`
}
