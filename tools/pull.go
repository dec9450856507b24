package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/prompts"
)

// agentIDPattern is what an external agent's id must look like: it is stored as the lease
// owner and shown in listings, never used in a path (bugs.md B31).
var agentIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)

// ClaimArgs are claim_mission's arguments.
type ClaimArgs struct {
	AgentID      string   `json:"agent_id" jsonschema:"your stable agent id (1-64 of A-Z a-z 0-9 _ . : -, starting with a letter or digit); the lease is yours under this name" pattern:"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"`
	Capabilities []string `json:"capabilities,omitempty" jsonschema:"what you can do, e.g. go, python, docs: only missions whose required capabilities you all offer are given to you" maxItems:"64"`
	Personas     []string `json:"personas,omitempty" jsonschema:"personas you accept, e.g. implementer, reviewer; omit to accept any" maxItems:"64"`
	Repository   string   `json:"repository,omitempty" jsonschema:"only missions of this repository (absolute path, or a remote repository's name, as missions store it)"`
	WaitSeconds  int      `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds (0 to 600) for work when nothing is runnable; answers as soon as something is" minimum:"0" maximum:"600"`
	Workspace    string   `json:"workspace,omitempty" jsonschema:"where you work: local (default), a checkout on the server's disk; remote_branch, for an agent on another host: the attempt's branch on the git remote of repository (which must be a repository named by a remote), which you fetch, push your commits to, then complete" enum:"local|remote_branch"`
}

// ClaimResult is claim_mission's answer.
type ClaimResult struct {
	// Claimed is false when nothing was runnable for you (Reason says why): call again later.
	Claimed bool   `json:"claimed"`
	Reason  string `json:"reason,omitempty"`
	// Mission is the mission you now run (state running).
	Mission *domain.Mission `json:"mission,omitempty"`
	// Epoch is your lease's fencing token: pass it with mission_id to every call.
	Epoch   int64 `json:"epoch,omitempty"`
	Attempt int   `json:"attempt,omitempty"`
	// Workspace is the checkout created for this attempt: work only there.
	Workspace *engine.Workspace `json:"workspace,omitempty"`
	// Brief is the full brief for this attempt (what to do, where, how to report).
	Brief string `json:"brief,omitempty"`
	// HeartbeatSeconds is how often to call heartbeat; the lease expires at LeaseExpiresAt
	// without one. The lease runs from the moment this result was ready (the workspace was
	// prepared before); an attempt you never heartbeat is abandoned, not failed.
	HeartbeatSeconds int       `json:"heartbeat_seconds,omitempty"`
	LeaseExpiresAt   time.Time `json:"lease_expires_at,omitzero"`
}

// ClaimMission is the claim_mission tool.
func ClaimMission(d *Deps) Tool {
	return newTool(toolSpec{
		name: "claim_mission", title: "Claim a mission (pull mode)", group: GroupPull, effect: Additive,
		description: "For an agent that works for the scheduler itself: take the next runnable mission that fits your capabilities and personas, in one step (leased and started), with a git workspace created for this attempt before the call returns. " +
			"Returns the mission, your lease epoch, the workspace path and the brief. With wait_seconds the call waits for work instead of answering claimed=false at once. Then heartbeat regularly and finish with complete_mission or fail_mission, always passing mission_id and epoch. " +
			"Your lease starts when this answer is ready (not while the workspace is made); a claim you never heartbeat is abandoned when the lease runs out and goes to another agent, without costing the mission its retry budget. " +
			"An agent on another host passes workspace remote_branch and the repository (one named by a git remote): it gets the remote's URL and the attempt's branch instead of a path, fetches it, pushes its commits there and then completes; a completion with nothing pushed is refused and the lease kept.",
		input: inputSchema[ClaimArgs](), output: outputSchema[ClaimResult](),
		handler: handle(func(ctx context.Context, req mcp.CallToolRequest, a ClaimArgs) (ClaimResult, error) {
			return claim(ctx, d, req, a)
		}),
	})
}

func claim(ctx context.Context, d *Deps, req mcp.CallToolRequest, a ClaimArgs) (ClaimResult, error) {
	if err := domain.CheckName("agent_id", "agent ids", a.AgentID); err != nil {
		return ClaimResult{}, err
	}
	if !agentIDPattern.MatchString(a.AgentID) {
		return ClaimResult{}, fieldError("agent_id", fmt.Sprintf("%q is not an agent id", clip(a.AgentID, 80)), "use 1-64 characters of A-Z a-z 0-9 _ . : -, starting with a letter or digit")
	}
	wait := time.Duration(a.WaitSeconds) * time.Second
	if wait < 0 || wait > engine.MaxClaimWait {
		return ClaimResult{}, fieldError("wait_seconds", fmt.Sprintf("%d is out of range", a.WaitSeconds), "wait 0 to 600 seconds")
	}
	if a.Workspace != "" && a.Workspace != "local" && a.Workspace != "remote_branch" {
		return ClaimResult{}, fieldError("workspace", fmt.Sprintf("%q is not a workspace kind", clip(a.Workspace, 80)), "use local (a checkout on the server's disk) or remote_branch (a branch on the repository's git remote)")
	}
	if d.Pull == nil {
		return ClaimResult{}, errNoWorkspaces
	}
	if err := d.Engine.TouchAgent(ctx, domain.Agent{ID: a.AgentID, Kind: "external",
		Capabilities: a.Capabilities, Personas: a.Personas}); err != nil {
		return ClaimResult{}, err
	}
	stop := waitingProgress(ctx, newProgress(ctx, req), wait)
	c, err := d.Pull.Claim(ctx, engine.ClaimRequest{AgentID: a.AgentID, Capabilities: a.Capabilities,
		Personas: a.Personas, Repository: a.Repository, AuthenticatedBy: TokenName(ctx), Wait: wait, RemoteBranch: a.Workspace == "remote_branch"})
	stop()
	var lost *engine.ClaimLostError
	var limited *engine.RateLimitedError
	switch {
	case errors.As(err, &lost):
		return ClaimResult{Reason: lost.Error()}, nil
	case errors.As(err, &limited):
		return ClaimResult{Reason: limited.Error()}, nil
	case errors.Is(err, domain.ErrNoWork) && err != domain.ErrNoWork:
		return ClaimResult{Reason: err.Error()}, nil // the pull service says why nothing fits
	case errors.Is(err, domain.ErrNoWork):
		return ClaimResult{Reason: "no runnable mission fits you now (none pending, or they wait for dependencies, conflicts or backoff); call again later or pass wait_seconds"}, nil
	case errors.Is(err, domain.ErrPaused):
		return ClaimResult{Reason: "the scheduler is paused: nothing new starts until resume_scheduler"}, nil
	case err != nil:
		return ClaimResult{}, err
	}
	m := c.Mission
	hb := int(c.HeartbeatInterval / time.Second)
	brief, err := prompts.AgentBrief(prompts.Brief{MissionID: m.ID, Attempt: m.Attempt, Epoch: m.Lease.Epoch,
		Title: m.Title, Brief: m.Brief, AcceptanceCriteria: m.AcceptanceCriteria, WriteArea: m.WriteArea,
		Persona: m.Persona, Kind: string(m.Kind), SubjectID: m.SubjectID, Workspace: localPath(c.Workspace),
		Branch: c.Workspace.Branch, BaseCommit: c.Workspace.BaseCommit, ReadOnly: c.Workspace.ReadOnly, RemoteURL: c.Workspace.RemoteURL,
		WorkspaceNotes: c.Workspace.Notes, Checkpoint: string(m.Checkpoint), PullMode: true, HeartbeatSeconds: hb})
	if err != nil {
		return ClaimResult{}, err
	}
	ws := c.Workspace
	ws.Path = localPath(ws)
	return ClaimResult{Claimed: true, Mission: &m, Epoch: m.Lease.Epoch, Attempt: m.Attempt, Workspace: &ws,
		Brief: brief, HeartbeatSeconds: hb, LeaseExpiresAt: m.Lease.ExpiresAt}, nil
}

// claimProgressEvery is how often a waiting claim reports progress.
var claimProgressEvery = 5 * time.Second

// waitingProgress sends a progress notification every few seconds while a claim waits for
// work (only when the client sent a progress token). The returned stop waits for it to end.
func waitingProgress(ctx context.Context, p *progress, wait time.Duration) (stop func()) {
	if (p.token == nil && p.task == nil) || wait <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(claimProgressEvery)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				waited := time.Since(start)
				p.send(ctx, waited.Seconds(), wait.Seconds(), fmt.Sprintf("waiting for work: %ds of %ds", int(waited.Seconds()), int(wait.Seconds())))
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// FenceArgs name the attempt a pull-mode call speaks for.
type FenceArgs struct {
	MissionID string `json:"mission_id" jsonschema:"the mission you claimed"`
	Epoch     int64  `json:"epoch" jsonschema:"the epoch claim_mission gave you" minimum:"1"`
}

func (f FenceArgs) fence() domain.Fence { return domain.Fence{MissionID: f.MissionID, Epoch: f.Epoch} }

// HeartbeatResult is heartbeat's answer.
type HeartbeatResult struct {
	engine.HeartbeatAnswer
	// NextHeartbeatSeconds is when to call again at the latest.
	NextHeartbeatSeconds int `json:"next_heartbeat_seconds"`
	// Instruction says what to do now, in words.
	Instruction string `json:"instruction"`
}

// Heartbeat is the heartbeat tool.
func Heartbeat(d *Deps) Tool {
	return newTool(toolSpec{
		name: "heartbeat", title: "Heartbeat (pull mode)", group: GroupPull, effect: Additive, idempotent: true,
		description: "Keep your lease alive while you work on a claimed mission: call it at least every heartbeat_seconds. The answer's yield=true asks you to save a checkpoint and call yield_mission at your next safe point (more urgent work needs the slot). " +
			"An answer saying the lease is lost means stop at once: the mission went to someone else.",
		input: inputSchema[FenceArgs](), output: outputSchema[HeartbeatResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a FenceArgs) (HeartbeatResult, error) {
			ans, err := d.Engine.Heartbeat(ctx, a.fence())
			if err != nil {
				return HeartbeatResult{}, err
			}
			out := HeartbeatResult{HeartbeatAnswer: ans, NextHeartbeatSeconds: int(d.Engine.LeaseTTL() / 3 / time.Second),
				Instruction: "keep working; call heartbeat again within next_heartbeat_seconds"}
			if ans.Yield {
				out.Instruction = "yield: save a checkpoint and call yield_mission at your next safe point"
			}
			return out, nil
		}),
	})
}

// ProgressArgs are report_progress's arguments.
type ProgressArgs struct {
	FenceArgs
	Percent *float64 `json:"percent,omitempty" jsonschema:"how far along, 0 to 100" minimum:"0" maximum:"100"`
	Message string   `json:"message" jsonschema:"what you just did or are doing, one line"`
}

// Recorded is the answer of pull-mode tools that only record something.
type Recorded struct {
	Recorded bool `json:"recorded"`
}

// ReportProgress is the report_progress tool.
func ReportProgress(d *Deps) Tool {
	return newTool(toolSpec{
		name: "report_progress", title: "Report progress (pull mode)", group: GroupPull, effect: Additive, idempotent: true,
		description: "Record how far you are on a claimed mission (a message and optionally a percentage); it also keeps the lease alive. People and the Main Agent see it in get_mission and get_mission_log.",
		input:       inputSchema[ProgressArgs](), output: outputSchema[Recorded](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a ProgressArgs) (Recorded, error) {
			err := d.Engine.Progress(ctx, a.fence(), a.Percent, a.Message)
			return Recorded{Recorded: err == nil}, err
		}),
	})
}

// CheckpointArgs are checkpoint_mission's arguments.
type CheckpointArgs struct {
	FenceArgs
	Checkpoint json.RawMessage `json:"checkpoint" jsonschema:"any JSON value (at most 1 MiB) a later attempt needs to resume: steps done, decisions, file list"`
	Message    string          `json:"message,omitempty" jsonschema:"what the checkpoint marks"`
}

// CheckpointMission is the checkpoint_mission tool.
func CheckpointMission(d *Deps) Tool {
	return newTool(toolSpec{
		name: "checkpoint_mission", title: "Save a checkpoint (pull mode)", group: GroupPull, effect: Destructive, idempotent: true,
		description: "Save your progress on a claimed mission as JSON and keep working. If your attempt ends early (lost lease, yield, crash), the next attempt receives the latest checkpoint and resumes from it. It replaces the previous checkpoint.",
		input:       inputSchema[CheckpointArgs](), output: outputSchema[Recorded](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a CheckpointArgs) (Recorded, error) {
			if len(a.Checkpoint) == 0 || string(a.Checkpoint) == "null" {
				return Recorded{}, fieldError("checkpoint", "is missing", "send a JSON value describing your progress")
			}
			err := d.Engine.Checkpoint(ctx, a.fence(), a.Checkpoint, a.Message)
			return Recorded{Recorded: err == nil}, err
		}),
	})
}

// YieldArgs are yield_mission's arguments.
type YieldArgs struct {
	FenceArgs
	Checkpoint json.RawMessage `json:"checkpoint,omitempty" jsonschema:"JSON the next attempt resumes from (default: the last saved checkpoint)"`
	Reason     string          `json:"reason,omitempty" jsonschema:"why you stop, e.g. preempted"`
	WaitFor    string          `json:"wait_for,omitempty" jsonschema:"children: do not resume until every child mission completed" enum:"children"`
}

// YieldMission is the yield_mission tool.
func YieldMission(d *Deps) Tool {
	return newTool(toolSpec{
		name: "yield_mission", title: "Yield a mission (pull mode)", group: GroupPull, effect: Additive,
		description: "Stop working on a claimed mission early without failing it: your attempt ends with its checkpoint (state interrupted) and the next attempt resumes from it, ahead of fresh work. Do this when heartbeat says yield. Your epoch is no longer valid afterwards.",
		input:       inputSchema[YieldArgs](), output: outputSchema[Recorded](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a YieldArgs) (Recorded, error) {
			cp := a.Checkpoint
			if string(cp) == "null" {
				cp = nil
			}
			err := d.Engine.Yield(ctx, a.fence(), cp, a.Reason, a.WaitFor)
			return Recorded{Recorded: err == nil}, err
		}),
	})
}

// UsageArg is what an attempt consumed.
type UsageArg struct {
	InputTokens  int64   `json:"input_tokens,omitempty" minimum:"0"`
	OutputTokens int64   `json:"output_tokens,omitempty" minimum:"0"`
	CostUSD      float64 `json:"cost_usd,omitempty" jsonschema:"US dollars" minimum:"0"`
}

func (u *UsageArg) usage() *domain.Usage {
	if u == nil {
		return nil
	}
	return &domain.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CostUSD: u.CostUSD}
}

// FindingArg is one reviewer remark.
type FindingArg struct {
	Severity string `json:"severity,omitempty" enum:"minor|severe"`
	Path     string `json:"path,omitempty" jsonschema:"file, relative to the repository root"`
	Line     int    `json:"line,omitempty" minimum:"0"`
	Message  string `json:"message" jsonschema:"what is wrong and what to change"`
}

// CompleteArgs are complete_mission's arguments.
type CompleteArgs struct {
	FenceArgs
	Summary   string       `json:"summary" jsonschema:"what you did and how you checked it, for the people who land and review it"`
	Artifacts []string     `json:"artifacts,omitempty" jsonschema:"files or outputs worth looking at, paths relative to the workspace" maxItems:"64"`
	Evidence  []string     `json:"evidence,omitempty" jsonschema:"how the acceptance criteria were checked (commands run and their outcome)" maxItems:"64"`
	Usage     *UsageArg    `json:"usage,omitempty" jsonschema:"tokens and cost this attempt used"`
	Verdict   string       `json:"verdict,omitempty" jsonschema:"reviewers only: approved, minor, severe or insufficient" enum:"approved|minor|severe|insufficient"`
	Findings  []FindingArg `json:"findings,omitempty" jsonschema:"reviewers only: each remark" maxItems:"200"`
}

// CompleteMission is the complete_mission tool.
func CompleteMission(d *Deps) Tool {
	return newTool(toolSpec{
		name: "complete_mission", title: "Complete a mission (pull mode)", group: GroupPull, effect: Additive,
		description: "Report that a claimed mission is done: its acceptance criteria hold and your work is committed in the workspace (what is left uncommitted is committed for you). The scheduler then reviews (when required), checks and lands it. A reviewer also gives its verdict and findings. Your epoch is no longer valid afterwards.",
		input:       inputSchema[CompleteArgs](), output: outputSchema[MissionResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a CompleteArgs) (MissionResult, error) {
			res := domain.WorkerResult{Summary: a.Summary, Artifacts: a.Artifacts, Evidence: a.Evidence,
				Usage: a.Usage.usage(), Verdict: a.Verdict}
			for _, f := range a.Findings {
				res.Findings = append(res.Findings, domain.Finding{Severity: f.Severity, Path: f.Path, Line: f.Line, Message: f.Message})
			}
			m, err := complete(ctx, d, a.fence(), res)
			return MissionResult{Mission: m}, err
		}),
	})
}

// FailureArg describes why an attempt failed.
type FailureArg struct {
	Kind       string `json:"kind" jsonschema:"error, test, build, timeout, model; workspace when your workspace was lost (the mission runs again in a fresh one); rate_limit when the provider refused you for an exhausted usage window (no retry budget spent; your claims are refused until the window resets: pass rate_limit); or, when retrying cannot help, auth, missing_toolchain, quota or permission (these block the mission with an escalation instead of retrying)" enum:"error|test|build|timeout|crash|protocol|model|workspace|rate_limit|auth|missing_toolchain|quota|permission"`
	Tool       string `json:"tool,omitempty" jsonschema:"the tool or command that failed, e.g. go test"`
	Diagnostic string `json:"diagnostic,omitempty" jsonschema:"its error message"`
	Location   string `json:"location,omitempty" jsonschema:"file:line or similar"`
	Summary    string `json:"summary,omitempty" jsonschema:"one line for people"`
}

// FailArgs are fail_mission's arguments.
type FailArgs struct {
	FenceArgs
	Failure FailureArg `json:"failure" jsonschema:"what failed; the same failure twice in a row counts double against the retry budget"`
	Summary string     `json:"summary,omitempty" jsonschema:"what you tried"`
	Usage   *UsageArg  `json:"usage,omitempty" jsonschema:"tokens and cost this attempt used"`
	// RateLimit is what the provider said of its window, for kind rate_limit.
	RateLimit *RateLimitArg `json:"rate_limit,omitempty" jsonschema:"for kind rate_limit: when the provider's usage window resets, as far as it said"`
}

// RateLimitArg is what a rate-limited pull-mode agent knows of its provider's window.
type RateLimitArg struct {
	ResetsAt          *time.Time `json:"resets_at,omitempty" jsonschema:"when the window resets (RFC 3339); your claims are refused until then plus the scheduler's rate_limit_margin"`
	RetryAfterSeconds float64    `json:"retry_after_seconds,omitempty" jsonschema:"the provider's retry-after, in seconds, when it gave no reset time" minimum:"0"`
	LimitType         string     `json:"limit_type,omitempty" jsonschema:"which window, e.g. five_hour"`
}

// limit is a as the agent protocol's rejected window (nil: nothing known).
func (a *RateLimitArg) limit() *agent.RateLimit {
	if a == nil {
		return nil
	}
	rl := &agent.RateLimit{Status: agent.RateRejected, RetryAfterSeconds: a.RetryAfterSeconds, LimitType: a.LimitType}
	if a.ResetsAt != nil {
		rl.ResetsAt = *a.ResetsAt
	}
	return rl
}

// FailResult is fail_mission's answer: the mission with the scheduler's decision.
type FailResult struct {
	Mission domain.Mission `json:"mission"`
	// Decision is what happens next: retry, retry_serial, debug, block or fail.
	Decision *domain.Decision `json:"decision,omitempty"`
}

// FailMission is the fail_mission tool.
func FailMission(d *Deps) Tool {
	return newTool(toolSpec{
		name: "fail_mission", title: "Fail a mission (pull mode)", group: GroupPull, effect: Additive,
		description: "Report that you could not finish a claimed mission, with the failure (kind, tool, diagnostic, location, summary). The scheduler decides what happens next — retry after a backoff, retry with nothing else running, a debugger mission, an escalation for environment problems, or failed when the retry budget is spent — and returns that decision. Your epoch is no longer valid afterwards.",
		input:       inputSchema[FailArgs](), output: outputSchema[FailResult](),
		handler: handle(func(ctx context.Context, _ mcp.CallToolRequest, a FailArgs) (FailResult, error) {
			f := a.Failure
			req := engine.FailRequest{Failure: domain.Failure{Kind: f.Kind, Tool: f.Tool,
				Diagnostic: f.Diagnostic, Location: f.Location, Summary: f.Summary}, Usage: a.Usage.usage(), Summary: a.Summary}
			if a.RateLimit != nil && f.Kind != domain.FailureRateLimit {
				return FailResult{}, fieldError("rate_limit", "is only for failure kind rate_limit", "drop rate_limit, or set failure.kind to rate_limit")
			}
			var m domain.Mission
			var err error
			if d.Pull != nil {
				m, err = d.Pull.Fail(ctx, a.fence(), req, a.RateLimit.limit())
			} else {
				m, err = d.Engine.Fail(ctx, a.fence(), req)
			}
			return FailResult{Mission: m, Decision: m.Decision}, err
		}),
	})
}

// complete records a pull-mode completion through the pull service, which refuses an attempt
// whose workspace was lost before its work was committed (shared/cases B17; the rule lives
// with the workspaces, engine/scheduler). This only gives that refusal its MCP form: a caller
// error (an isError result) that says what to do instead. It is no bad argument — the
// mission id and epoch were right — so it is not told as one ("invalid argument:
// mission_id: …") but as a refusal.
func complete(ctx context.Context, d *Deps, f domain.Fence, res domain.WorkerResult) (domain.Mission, error) {
	if d.Pull == nil {
		return d.Engine.Complete(ctx, f, res)
	}
	m, err := d.Pull.Complete(ctx, f, res)
	var lost *domain.WorkspaceLostError
	if errors.As(err, &lost) {
		return m, &callerError{msg: "refused: " + lost.Error() +
			"; the work cannot be landed: call fail_mission with failure kind workspace, and the mission runs again in a fresh workspace"}
	}
	var unpushed *domain.NothingPushedError
	if errors.As(err, &unpushed) {
		return m, &callerError{msg: "refused: " + unpushed.Error() + "; push your commits (git push " + unpushed.RemoteURL +
			" HEAD:refs/heads/" + unpushed.Branch + ") and call complete_mission again: nothing was recorded and your lease is kept"}
	}
	return m, err
}

// localPath is the workspace's path for the agent: none for a remote-branch attempt, whose
// path on the server's disk names no directory.
func localPath(ws engine.Workspace) string {
	if ws.RemoteURL != "" {
		return ""
	}
	return ws.Path
}
