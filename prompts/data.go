package prompts

// Plan is what the voyage-planning prompt needs.
type Plan struct {
	// Goal is what the person or Main Agent wants done (required).
	Goal string
	// Repository is the repository the missions work on ("" = the server's default).
	Repository string
	// Constraints are extra rules for the plan (deadlines, areas not to touch, ...).
	Constraints string
	// MaxMissions bounds the plan's size (0 = no bound stated).
	MaxMissions int
}

// PlanVoyage renders the prompt that asks a model to split Goal into missions and hand them
// to the dispatch tool in one call, with client keys, dependency edges and write areas.
func PlanVoyage(p Plan) (string, error) {
	if p.Goal == "" {
		return "", errEmpty("Goal")
	}
	return render(NamePlanVoyage, p)
}

// Brief is what a child agent is told about one attempt of a mission.
type Brief struct {
	MissionID string
	Attempt   int
	Epoch     int64
	Title     string
	// Brief is the mission's prompt as its author wrote it.
	Brief              string
	AcceptanceCriteria []string
	// WriteArea lists the glob patterns the agent may change (empty: the whole repository).
	WriteArea []string
	Persona   string
	// Kind is the mission kind (work, review, repair, debug, verify, architect).
	Kind string
	// SubjectID is the mission a review, repair or debug mission is about.
	SubjectID string
	// Workspace, Branch and BaseCommit say where the agent works.
	Workspace  string
	Branch     string
	BaseCommit string
	ReadOnly   bool
	// RemoteURL, for a remote-branch attempt (claim_mission with workspace remote_branch), is
	// the git remote holding Branch: the agent works in a clone of its own, fetches Branch
	// from there and pushes its commits to it; Workspace is then empty.
	RemoteURL string
	// Checkpoint is what the previous attempt saved (JSON), when this attempt resumes.
	Checkpoint string
	// Conflicts lists paths left with conflict markers for a repair mission to resolve.
	Conflicts []string
	// WorkspaceNotes say what the workspace holds differently from the person's checkout
	// (Git LFS files left as pointers, submodules left empty and why).
	WorkspaceNotes []string
	// PullMode is true for an MCP client that claimed the mission: it reports through the
	// scheduler's tools (heartbeat, report_progress, complete_mission, ...) instead of NDJSON
	// lines on stdout.
	PullMode bool
	// HeartbeatSeconds is how often a pull-mode agent calls heartbeat.
	HeartbeatSeconds int
}

// AgentBrief renders the brief a child agent receives (the scheduler writes it to
// .mcp-scheduler/brief.md in the workspace; pull-mode agents get it from claim_mission).
func AgentBrief(b Brief) (string, error) {
	if b.MissionID == "" || b.Title == "" {
		return "", errEmpty("MissionID and Title")
	}
	return render(NameAgentBrief, b)
}

// Review is what a reviewer is told about the mission it reviews.
type Review struct {
	MissionID          string
	Title              string
	Brief              string
	AcceptanceCriteria []string
	WriteArea          []string
	// Branch and BaseCommit name the reviewed work; Workspace is the read-only snapshot.
	Branch     string
	BaseCommit string
	Workspace  string
	// ChangedFiles lists the files the mission changed, when known.
	ChangedFiles []string
	// Summary is what the implementing agent reported.
	Summary string
}

// ReviewMission renders the reviewer's prompt: check the work against the brief and the
// acceptance criteria and answer with one verdict (approved, minor, severe, insufficient).
func ReviewMission(r Review) (string, error) {
	if r.MissionID == "" || r.Title == "" {
		return "", errEmpty("MissionID and Title")
	}
	return render(NameReviewMission, r)
}

// Escalation is a blocker to write up for whoever must decide.
type Escalation struct {
	// ID is the escalation's id when one exists already.
	ID         string
	MissionIDs []string
	VoyageID   string
	Route      string
	Kind       string
	Reason     string
	// DecisionRequired and SafeNextStep, when already known, are restated in the report.
	DecisionRequired string
	Evidence         []string
	SafeNextStep     string
	// Missions gives one line per mission involved ("msn_… (title): state, why").
	Missions []string
}

// EscalationReport renders the prompt that asks a model to write a clear escalation report
// (reason, decision required, evidence, safe next step, route) and file it with the escalate
// tool, or improve the one already filed.
func EscalationReport(e Escalation) (string, error) {
	return render(NameEscalationReport, e)
}

type emptyFieldError string

func (e emptyFieldError) Error() string { return "prompts: " + string(e) + " must not be empty" }

func errEmpty(field string) error { return emptyFieldError(field) }
