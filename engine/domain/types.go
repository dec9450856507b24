package domain

import (
	"encoding/json"
	"time"
)

// MissionKind says why a mission exists: ordinary work, or a mission the scheduler made about
// another one (SubjectID).
type MissionKind string

// Mission kinds.
const (
	KindWork      MissionKind = "work"      // ordinary work handed in by a person or the Main Agent
	KindReview    MissionKind = "review"    // review of SubjectID's branch before it lands
	KindRepair    MissionKind = "repair"    // fix SubjectID's landing conflict, failed checks or review findings
	KindDebug     MissionKind = "debug"     // investigate SubjectID's repeated failures
	KindVerify    MissionKind = "verify"    // gather the evidence a review found insufficient
	KindArchitect MissionKind = "architect" // decide an architecture or interface conflict
)

// Valid reports whether k is a known kind.
func (k MissionKind) Valid() bool {
	switch k {
	case KindWork, KindReview, KindRepair, KindDebug, KindVerify, KindArchitect:
		return true
	}
	return false
}

// LandingState tracks a completed mission's way onto its target branch.
type LandingState string

// Landing states. A hard dependency is satisfied when its mission is completed and its
// landing state is LandingLanded or LandingNotRequired.
const (
	LandingNone        LandingState = "none"         // not completed yet
	LandingPending     LandingState = "pending"      // completed, waiting for review, checks or the landing queue
	LandingLanded      LandingState = "landed"       // on the target branch
	LandingNotRequired LandingState = "not_required" // nothing to land (review, read-only or empty work)
	LandingApproval    LandingState = "approval"     // waits for approve_landing (policy approval)
	LandingWaiting     LandingState = "waiting"      // waiting_for_clean_checkout
	LandingConflicted  LandingState = "conflicted"   // a repair mission or a decision is needed
	LandingLeft        LandingState = "left"         // policy none: the branch is left for a person
	LandingReview      LandingState = "review"       // waiting for its reviewer's verdict
	LandingRepair      LandingState = "repair"       // a repair mission carries this work (findings, failed checks, conflict)
	LandingApproved    LandingState = "approved"     // approved (approve_landing), waiting for the landing queue
)

// Satisfies reports whether a mission in this landing state satisfies a hard dependency.
func (l LandingState) Satisfies() bool { return l == LandingLanded || l == LandingNotRequired }

// ModelPolicy says who picks the model: ModeSchedulerForced runs exactly Model;
// ModeAgentSelect lets the agent choose within Allowed (empty: the profile's models).
type ModelPolicy struct {
	Mode    string   `json:"mode,omitempty"`
	Model   string   `json:"model,omitempty"`
	Allowed []string `json:"allowed,omitempty"`
}

// Model policy modes.
const (
	ModeSchedulerForced = "scheduler_forced"
	ModeAgentSelect     = "agent_select"
)

// Lease is ownership of a mission's current attempt. Epoch is the fencing token: it grows on
// every acquire and every ownership operation must present it.
type Lease struct {
	Owner     string    `json:"owner,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	Epoch     int64     `json:"epoch"`
}

// Fence identifies the attempt an ownership operation speaks for.
type Fence struct {
	MissionID string `json:"mission_id"`
	Epoch     int64  `json:"epoch"`
}

// Progress is the last progress an agent reported.
type Progress struct {
	Percent *float64  `json:"percent,omitempty"`
	Message string    `json:"message,omitempty"`
	At      time.Time `json:"at"`
}

// Decision is what the engine decided after a failure, with its reason (design brief §2).
type Decision struct {
	Kind   DecisionKind `json:"kind"`
	Reason string       `json:"reason"`
	At     time.Time    `json:"at"`
}

// DecisionKind is one of the failure decisions.
type DecisionKind string

// Failure decisions. DecisionFail is the terminal one: the budget is spent.
const (
	DecisionRetry       DecisionKind = "retry"        // try again after backoff
	DecisionRetrySerial DecisionKind = "retry_serial" // try again with no conflicting work in parallel
	DecisionDebug       DecisionKind = "debug"        // a debugger mission investigates first
	DecisionSkip        DecisionKind = "skip"         // give up on it without failing the voyage (→ cancelled, skipped)
	DecisionBlock       DecisionKind = "block"        // a decision is needed (escalation)
	DecisionCancel      DecisionKind = "cancel"       // stop it
	DecisionFail        DecisionKind = "fail"         // the retry budget is spent (→ failed)
)

// Mission is one unit of work for one agent (design brief §1).
type Mission struct {
	ID             string `json:"id"`
	VoyageID       string `json:"voyage_id,omitempty"`
	ParentID       string `json:"parent_id,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Key is the client key the mission had in its dispatch call.
	Key string `json:"key,omitempty"`

	Title              string      `json:"title"`
	Brief              string      `json:"brief"`
	Repository         string      `json:"repository"`
	TargetBranch       string      `json:"target_branch,omitempty"`
	Priority           int         `json:"priority"`
	Kind               MissionKind `json:"kind"`
	SubjectID          string      `json:"subject_id,omitempty"`
	Persona            string      `json:"persona,omitempty"`
	Capabilities       []string    `json:"capabilities,omitempty"`
	WriteArea          []string    `json:"write_area,omitempty"` // nil: exclusive in its repository
	ModelPolicy        ModelPolicy `json:"model_policy,omitzero"`
	Workspace          string      `json:"workspace,omitempty"` // strategy: worktree, snapshot, main, isolated_copy
	Review             string      `json:"review"`              // none | required
	AcceptanceCriteria []string    `json:"acceptance_criteria,omitempty"`
	Deadline           time.Time   `json:"deadline,omitzero"`
	RetryBudget        int         `json:"retry_budget"`
	CostLimitUSD       float64     `json:"cost_limit_usd,omitempty"`

	State        MissionState `json:"state"`
	Attempt      int          `json:"attempt"`
	AttemptsUsed int          `json:"attempts_used"` // weighted: an identical failure counts double
	// Abandons counts the attempts in a row that ended abandoned: their lease ran out (or the
	// claim's caller went away) before anything was heard from the agent. Abandons cost no
	// retry budget; AbandonLimit of them in a row block the mission with an escalation.
	Abandons int `json:"abandons,omitempty"`
	// Contacted says the current attempt's agent was heard from (a heartbeat, progress or a
	// checkpoint): an expiry after that is a crash, before it an abandon.
	Contacted bool   `json:"contacted,omitempty"`
	Lease     Lease  `json:"lease"`
	Profile   string `json:"profile,omitempty"` // agent profile or external agent of the current attempt
	// Node is the scheduler node that took the latest attempt's lease (cluster mode: several
	// scheduler processes sharing one PostgreSQL store; "" on a single node). It stays after
	// the attempt ends: that node's disk holds the attempt's workspace and directory.
	Node          string          `json:"node,omitempty"`
	NotBefore     time.Time       `json:"not_before,omitzero"`
	WaitReason    string          `json:"wait_reason,omitempty"`
	Preempt       bool            `json:"preempt,omitempty"`
	Serial        bool            `json:"serial,omitempty"` // retry_serial: runs with nothing else in its repository
	Checkpoint    json.RawMessage `json:"checkpoint,omitempty"`
	Progress      *Progress       `json:"progress,omitempty"`
	Result        *WorkerResult   `json:"result,omitempty"`
	LastFailure   *Failure        `json:"last_failure,omitempty"`
	LastSignature string          `json:"last_signature,omitempty"`
	Decision      *Decision       `json:"decision,omitempty"`
	Landing       LandingState    `json:"landing"`
	Skipped       bool            `json:"skipped,omitempty"`
	// VoyageActive is read from the store, never written by the engine: the mission's voyage
	// is live — open (dispatched), active or blocked — so the mission goes before standalone
	// missions of its priority in the pick order (Armada's "active or in-progress voyage",
	// shared/cases/armada-scheduling.md). The store derives it from the voyage's state in the
	// transition that changes that state (storage: migrations 0007, 0011).
	VoyageActive bool   `json:"-"`
	Usage        Usage  `json:"usage,omitzero"`
	EscalationID string `json:"escalation_id,omitempty"`
	// DeadlineEscalated is set once a missed deadline raised its escalation.
	DeadlineEscalated bool `json:"deadline_escalated,omitempty"`
	// Run is the scheduler's record of the current attempt (workspace, process identity,
	// attempt directory): opaque JSON owned by engine/scheduler.
	Run json.RawMessage `json:"run,omitempty"`

	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
}

// Exclusive reports whether the mission runs alone in its repository: it declares no write
// area, or a retry_serial decision made it serial.
func (m *Mission) Exclusive() bool { return len(m.WriteArea) == 0 || m.Serial }

// Fence returns the fence of the mission's current lease.
func (m *Mission) Fence() Fence { return Fence{MissionID: m.ID, Epoch: m.Lease.Epoch} }

// VoyageState is where a voyage stands.
type VoyageState string

// Voyage states: open → active (a mission of it started) → completed / blocked / cancelled.
const (
	VoyageOpen      VoyageState = "open"
	VoyageActive    VoyageState = "active"
	VoyageCompleted VoyageState = "completed"
	VoyageBlocked   VoyageState = "blocked"
	VoyageCancelled VoyageState = "cancelled"
)

// Voyage is a batch of missions dispatched together for one goal.
type Voyage struct {
	ID                  string      `json:"id"`
	IdempotencyKey      string      `json:"idempotency_key,omitempty"`
	Title               string      `json:"title"`
	Goal                string      `json:"goal,omitempty"`
	Repository          string      `json:"repository"`
	TargetBranch        string      `json:"target_branch,omitempty"`
	State               VoyageState `json:"state"`
	CostLimitUSD        float64     `json:"cost_limit_usd,omitempty"`
	TokenLimit          int64       `json:"token_limit,omitempty"` // input plus output tokens; 0: none
	Usage               Usage       `json:"usage,omitzero"`
	RequirementsChanged bool        `json:"requirements_changed,omitempty"`
	EscalationID        string      `json:"escalation_id,omitempty"`
	CreatedAt           time.Time   `json:"created_at"`
	UpdatedAt           time.Time   `json:"updated_at"`
	SettledAt           time.Time   `json:"settled_at,omitzero"`
}

// EdgeType is the kind of a dependency edge (design brief §4).
type EdgeType string

// Edge types.
const (
	EdgeHard          EdgeType = "hard"          // must complete and land first
	EdgeSoft          EdgeType = "soft"          // an ordering hint only
	EdgeConflict      EdgeType = "conflict"      // never at the same time, either order
	EdgeSerialization EdgeType = "serialization" // start after the other is terminal
)

// Valid reports whether t is a known edge type.
func (t EdgeType) Valid() bool {
	switch t {
	case EdgeHard, EdgeSoft, EdgeConflict, EdgeSerialization:
		return true
	}
	return false
}

// Ordering reports whether edges of this type order missions (and so may not form cycles).
func (t EdgeType) Ordering() bool { return t != EdgeConflict }

// Edge sources.
const (
	SourceUser      = "user"
	SourceArchitect = "architect"
	SourceScheduler = "scheduler"
	SourceAgent     = "agent"
	SourceSystem    = "system"
)

// Dependency is one edge: MissionID depends on DependsOn (for conflict edges the order is
// irrelevant).
type Dependency struct {
	MissionID string    `json:"mission_id"`
	DependsOn string    `json:"depends_on"`
	Type      EdgeType  `json:"type"`
	Reason    string    `json:"reason,omitempty"`
	Source    string    `json:"source"`
	CreatedAt time.Time `json:"created_at"`
}

// Route is who an escalation goes to.
type Route string

// Escalation routes (design brief §1).
const (
	RouteMainAgent Route = "main_agent"
	RouteArchitect Route = "architect"
	RoutePerson    Route = "person"
	RouteDebugger  Route = "debugger"
)

// Valid reports whether r is a known route.
func (r Route) Valid() bool {
	switch r {
	case RouteMainAgent, RouteArchitect, RoutePerson, RouteDebugger:
		return true
	}
	return false
}

// Escalation is a blocker report that waits for a decision.
type Escalation struct {
	ID         string   `json:"id"`
	MissionIDs []string `json:"mission_ids"`
	VoyageID   string   `json:"voyage_id,omitempty"`
	Route      Route    `json:"route"`
	Kind       string   `json:"kind"` // why: environment, budget, upstream_failed, child_failed, deadline, review, conflict, deadlock, decision, checkout, report, abandoned
	// CauseID is the mission whose failure caused this escalation (kind upstream_failed,
	// child_failed), so that retrying it reopens what it blocked.
	CauseID          string    `json:"cause_id,omitempty"`
	Reason           string    `json:"reason"`
	DecisionRequired string    `json:"decision_required"`
	Evidence         []string  `json:"evidence,omitempty"`
	SafeNextStep     string    `json:"safe_next_step,omitempty"`
	State            string    `json:"state"` // open | resolved
	Resolution       string    `json:"resolution,omitempty"`
	ResolvedBy       string    `json:"resolved_by,omitempty"`
	CreatedAt        time.Time `json:"created_at"`
	ResolvedAt       time.Time `json:"resolved_at,omitzero"`
	// OnceKey is the de-duplication key of an escalation raised once (EscalateOnce): its
	// kind and subject, "checkout:m-…"; at most one open escalation has a key. Internal to
	// the rule: not part of the MCP surface.
	OnceKey string `json:"-"`
}

// Escalation states.
const (
	EscalationOpen     = "open"
	EscalationResolved = "resolved"
)

// Event is one append-only record of a state change. Data holds the change's details as
// JSON; Replay rebuilds mission state from these records.
type Event struct {
	Seq       int64           `json:"seq"`
	At        time.Time       `json:"at"`
	Type      string          `json:"type"`
	MissionID string          `json:"mission_id,omitempty"`
	VoyageID  string          `json:"voyage_id,omitempty"`
	Epoch     int64           `json:"epoch,omitempty"`
	Attempt   int             `json:"attempt,omitempty"`
	Actor     string          `json:"actor,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
}

// Attempt is the record of one finished run of a mission.
type Attempt struct {
	MissionID string         `json:"mission_id"`
	Attempt   int            `json:"attempt"`
	Epoch     int64          `json:"epoch"`
	Agent     string         `json:"agent,omitempty"`
	Profile   string         `json:"profile,omitempty"`
	Persona   string         `json:"persona,omitempty"`
	Outcome   AttemptOutcome `json:"outcome"`
	Failure   *Failure       `json:"failure,omitempty"`
	Signature string         `json:"signature,omitempty"`
	Weight    int            `json:"weight,omitempty"`
	Usage     Usage          `json:"usage,omitzero"`
	Summary   string         `json:"summary,omitempty"`
	StartedAt time.Time      `json:"started_at,omitzero"`
	EndedAt   time.Time      `json:"ended_at"`
}

// Landing is the record of landing one attempt (idempotent per mission and attempt).
type Landing struct {
	MissionID        string   `json:"mission_id"`
	Attempt          int      `json:"attempt"`
	Status           string   `json:"status"`
	TargetBranch     string   `json:"target_branch,omitempty"`
	Commit           string   `json:"commit,omitempty"`
	OldTarget        string   `json:"old_target,omitempty"`
	NewTarget        string   `json:"new_target,omitempty"`
	ChangedFiles     []string `json:"changed_files,omitempty"`
	OutsideWriteArea []string `json:"outside_write_area,omitempty"`
	ConflictPaths    []string `json:"conflict_paths,omitempty"`
	Detail           string   `json:"detail,omitempty"`
	// DurationMS is how long the landing took (merge, checks, moving the branch), in ms; for
	// missions landed together in one pass (worktree.LandBatch), the pass's duration divided
	// evenly among them.
	DurationMS int64     `json:"duration_ms,omitempty"`
	At         time.Time `json:"at"`
}

// Agent is a worker the scheduler knows: a managed profile or an external MCP client.
type Agent struct {
	ID           string    `json:"id"`
	Kind         string    `json:"kind"` // managed | external
	Profile      string    `json:"profile,omitempty"`
	Capabilities []string  `json:"capabilities,omitempty"`
	Personas     []string  `json:"personas,omitempty"`
	LastSeen     time.Time `json:"last_seen"`
	Running      int       `json:"running"`
}

// Wave is what one planning step decided.
type Wave struct {
	ID         int64       `json:"id"`
	At         time.Time   `json:"at"`
	Runnable   int         `json:"runnable"`
	Dispatched []WaveEntry `json:"dispatched,omitempty"`
	Held       []WaveEntry `json:"held,omitempty"`
}

// WaveEntry is one mission in a wave: where it went, or why it was held back.
type WaveEntry struct {
	MissionID string `json:"mission_id"`
	Profile   string `json:"profile,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Score     *Score `json:"score,omitempty"`
}

// Score is the breakdown of one assignment score (design brief §3):
// Total = CapabilityOverlap × (1 − Load) × Confidence × (1 + PriorityBoost). It is recorded
// in the dispatch event so "why did this mission go there" is answerable.
type Score struct {
	Profile           string  `json:"profile"`
	CapabilityOverlap float64 `json:"capability_overlap"`
	Load              float64 `json:"load"`
	Confidence        float64 `json:"confidence"`
	PriorityBoost     float64 `json:"priority_boost"`
	PreferredPersona  bool    `json:"preferred_persona"`
	Total             float64 `json:"total"`
}
