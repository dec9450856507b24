package scheduler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/prompts"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// assignment is a planned dispatch: a mission, the profile chosen for it and why.
type assignment struct {
	mission domain.Mission
	profile agent.Profile
	model   string
	score   domain.Score
	scores  []domain.Score
}

// dispatch starts one planned assignment: the lease is taken here, in one guarded statement
// presenting this process's leader lease (so a process that lost leadership cannot dispatch),
// so the plan's accounting sees it at once; the slow part (workspace, brief, process) runs in
// the background so that one checkout never holds up the tick.
func (s *Scheduler) dispatch(ctx context.Context, a assignment) (bool, error) {
	req := engine.AcquireRequest{AgentID: a.profile.Name, Profile: a.profile.Name, MissionID: a.mission.ID,
		Capabilities: a.profile.Capabilities, Personas: nilIfEmpty(a.profile.Personas)}
	// The acquire is fenced: by the leader lease on a single node, by the node lease in
	// cluster mode (every node dispatches for its own agents).
	if s.node != nil {
		req.Node = s.node.fence()
	} else {
		req.Leader = s.leader.fence()
	}
	if req.Leader == nil && req.Node == nil {
		return false, nil // leadership (or the node) lost since the tick began
	}
	// The targeted acquire applies the runnable rules again in SQL, the agent filters
	// included: it must present what the chosen profile offers, or a mission that requires
	// capabilities is never found (and waits for ever while the planner calls it runnable).
	m, err := s.eng.Acquire(ctx, req)
	if errors.Is(err, domain.ErrNoWork) || errors.Is(err, domain.ErrPaused) {
		return false, nil // taken or changed since planning
	}
	if errors.Is(err, domain.ErrNotLeader) {
		s.log.Warn("not dispatching: the leader (or node) lease is not ours any more", "mission_id", a.mission.ID, "err", err)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	s.sup.launch(m.ID, func() {
		if err := s.launch(context.WithoutCancel(ctx), m, a); err != nil {
			s.log.Error("launch failed", "mission_id", m.ID, "err", err)
		}
	})
	return true, nil
}

// nilIfEmpty: an empty persona list means any persona (the acquire's nil), as in Eligible.
func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// launch prepares and starts a leased attempt. Each failure is mapped as issue 6 says:
// permission denied → blocked; workspace failure → retried when recoverable, else failed;
// brief failure → failed; process start failure → failed.
func (s *Scheduler) launch(ctx context.Context, m domain.Mission, a assignment) error {
	fence := m.Fence()
	s.crashPoint("acquired")
	t0 := time.Now()
	ws, err := s.prepare(ctx, &m)
	prepared := time.Since(t0)
	if err != nil {
		return s.dispatchFailed(ctx, fence, "workspace", err)
	}
	s.crashPoint("prepared")
	brief, err := s.renderBrief(&m, ws, false)
	if err != nil {
		return s.dispatchFailed(ctx, fence, "brief", err)
	}
	dir, err := s.run.AttemptDir(m.ID, m.Attempt)
	if err != nil {
		return s.dispatchFailed(ctx, fence, "brief", err)
	}
	ad, err := adapters.For(a.profile.Runtime)
	if err != nil {
		return s.dispatchFailed(ctx, fence, "start", err)
	}
	start := agent.Start{Type: agent.TypeStart, Protocol: agent.Version, MissionID: m.ID, Attempt: m.Attempt,
		Epoch: m.Lease.Epoch, Title: m.Title, Brief: brief, AcceptanceCriteria: m.AcceptanceCriteria,
		WriteArea: m.WriteArea, Workspace: ws.Path, Branch: ws.Branch, BaseCommit: ws.BaseCommit,
		Persona: m.Persona, Kind: string(m.Kind), SubjectID: m.SubjectID, Model: a.model, Checkpoint: m.Checkpoint}
	proc, err := s.run.Launch(ctx, runner.Spec{Adapter: ad, Profile: a.profile, AttemptDir: dir,
		Request: agent.LaunchRequest{Start: start, BriefFile: filepath.Join(ws.Path, ".mcp-scheduler", "brief.md")},
		Vars:    missionVars(&m, ws)})
	if err != nil {
		return s.dispatchFailed(ctx, fence, "start", err)
	}
	s.crashPoint("launched")
	rec := RunRecord{Mode: ModeManaged, Attempt: m.Attempt, Profile: a.profile.Name, Runtime: string(a.profile.Runtime), Model: a.model, Worktree: ws,
		AttemptDir: dir, PID: proc.PID(), AgentStart: proc.Record().AgentStart, Score: &a.score, Scores: a.scores,
		PrepareMS: prepared.Milliseconds(), LaunchedAt: s.cfg.Now()}
	run := &attemptRun{fence: fence, mission: m, rec: rec, proc: proc, profile: a.profile}
	started, err := s.eng.Start(ctx, fence)
	if err != nil {
		s.abandonLaunch(m.ID, proc, "the mission could not be marked running")
		return ignoreLost(err)
	}
	s.crashPoint("started")
	if err := s.eng.SetRun(ctx, fence, rec.raw(), rec.workspace()); err != nil {
		s.abandonLaunch(m.ID, proc, "its run record could not be stored")
		return ignoreLost(err)
	}
	s.crashPoint("recorded")
	s.sup.adopt(ctx, run, started.Lease.ExpiresAt)
	return nil
}

// abandonLaunch stops an agent just launched whose attempt cannot go on (why: the step that
// failed; that step's error is the launch's), and waits for it: it must not work on a
// mission that is not recorded as its. A stop that fails is logged: the agent's process
// group may still run and a person must look (the lease fence does not watch it).
func (s *Scheduler) abandonLaunch(missionID string, proc *runner.Process, why string) {
	if err := proc.Stop(runner.ReasonLeaseLost); err != nil {
		s.log.Error("launched agent not stopped after its attempt could not go on: its process group may still run",
			"mission_id", missionID, "pid", proc.PID(), "why", why, "err", err)
	}
	proc.Wait() // the outcome is not used: the attempt was not recorded as running this agent
}

// crashPoint lets crash-injection tests end the process between two steps of a dispatch
// (acquired, prepared, launched, started, recorded); nil outside tests.
func (s *Scheduler) crashPoint(stage string) {
	if s.testCrashPoint != nil {
		s.testCrashPoint(stage)
	}
}

// ignoreLost turns "the mission is no longer ours" into nothing to report.
func ignoreLost(err error) error {
	if errors.Is(err, domain.ErrLeaseLost) {
		return nil
	}
	return err
}

// prepare creates the workspace of m's current attempt (or resumes its predecessor's):
// workspaces.prepare.
func (s *Scheduler) prepare(ctx context.Context, m *domain.Mission) (worktree.Workspace, error) {
	return s.ws.prepare(ctx, m)
}

// prepare creates the workspace of m's current attempt (or resumes its predecessor's).
func (ws *workspaces) prepare(ctx context.Context, m *domain.Mission) (worktree.Workspace, error) {
	req, err := ws.prepareRequest(ctx, m)
	if err != nil {
		return worktree.Workspace{}, err
	}
	return ws.wt.Prepare(ctx, req)
}

// prepareRemote makes m's current attempt a branch on its repository's remote
// (worktree.Manager.PrepareRemoteBranch), for a pull-mode agent on another host.
func (ws *workspaces) prepareRemote(ctx context.Context, m *domain.Mission) (worktree.Workspace, error) {
	req, err := ws.prepareRequest(ctx, m)
	if err != nil {
		return worktree.Workspace{}, err
	}
	return ws.wt.PrepareRemoteBranch(ctx, req)
}

// prepareRequest is what m's current attempt's workspace is made from: its strategy and
// target, its predecessor's workspace when it resumes, its subject's branch for review,
// verify and repair missions.
func (ws *workspaces) prepareRequest(ctx context.Context, m *domain.Mission) (worktree.PrepareRequest, error) {
	repo, err := ws.wt.Open(m.Repository)
	if err != nil {
		return worktree.PrepareRequest{}, err
	}
	req := worktree.PrepareRequest{Repo: repo, MissionID: m.ID, Attempt: m.Attempt,
		Strategy: worktree.Strategy(m.Workspace), TargetBranch: ws.cfg.targetBranch(m)}
	prev, err := runWith(ctx, ws.eng, m)
	if err != nil {
		return worktree.PrepareRequest{}, err
	}
	if m.Checkpoint != nil && prev.Worktree.Path != "" && !prev.Worktree.ReadOnly {
		req.Resume = &prev.Worktree // a resumed attempt continues in its predecessor's workspace
	}
	if err := ws.subjectStart(ctx, m, &req); err != nil {
		return worktree.PrepareRequest{}, err
	}
	return req, nil
}

// subjectStart points review, verify and repair missions at the work they are about.
func (ws *workspaces) subjectStart(ctx context.Context, m *domain.Mission, req *worktree.PrepareRequest) error {
	if m.SubjectID == "" || req.Resume != nil {
		return nil
	}
	d, err := ws.eng.GetMission(ctx, m.SubjectID)
	if err != nil {
		return fmt.Errorf("subject %s of %s: %w", m.SubjectID, m.ID, err)
	}
	subjRun, err := runWith(ctx, ws.eng, &d.Mission)
	if err != nil {
		return fmt.Errorf("subject %s of %s: %w", m.SubjectID, m.ID, err)
	}
	subj := subjRun.Worktree
	if subj.Branch == "" {
		return nil
	}
	switch m.Kind {
	case domain.KindReview, domain.KindVerify:
		req.Strategy, req.SnapshotCommit = worktree.StrategySnapshot, subj.Branch
	case domain.KindRepair:
		req.StartPoint, req.MergeTarget = subj.Branch, true
	}
	return nil
}

// targetBranch is the branch m lands on: its own, else its repository's policy's (empty: the
// repository's default branch, resolved when the workspace is made).
func (c Config) targetBranch(m *domain.Mission) string {
	if m.TargetBranch != "" {
		return m.TargetBranch
	}
	return c.policy(m.Repository).TargetBranch
}

// renderBrief writes the brief the agent receives (prompts.AgentBrief).
func (s *Scheduler) renderBrief(m *domain.Mission, ws worktree.Workspace, pull bool) (string, error) {
	b := prompts.Brief{MissionID: m.ID, Attempt: m.Attempt, Epoch: m.Lease.Epoch, Title: m.Title, Brief: m.Brief,
		AcceptanceCriteria: m.AcceptanceCriteria, WriteArea: m.WriteArea, Persona: m.Persona, Kind: string(m.Kind),
		SubjectID: m.SubjectID, Workspace: ws.Path, Branch: ws.Branch, BaseCommit: ws.BaseCommit,
		ReadOnly: ws.ReadOnly, Conflicts: ws.Conflicts, WorkspaceNotes: ws.Notes, PullMode: pull,
		HeartbeatSeconds: int(s.eng.LeaseTTL().Seconds() / 3)}
	if len(m.Checkpoint) > 0 {
		b.Checkpoint = string(m.Checkpoint)
	}
	return prompts.AgentBrief(b)
}

// missionVars are the variables every agent of a mission gets, besides its profile's: the
// mission's identity and, when the workspace needs them (ws.GitConfig: the LFS filter off
// when git-lfs is not on the scheduler's PATH), git settings as GIT_CONFIG_COUNT/KEY/VALUE,
// which every git the agent runs reads.
func missionVars(m *domain.Mission, ws worktree.Workspace) map[string]string {
	vars := map[string]string{
		"MCP_SCHEDULER_MISSION_ID": m.ID,
		"MCP_SCHEDULER_ATTEMPT":    strconv.Itoa(m.Attempt),
		"MCP_SCHEDULER_EPOCH":      strconv.FormatInt(m.Lease.Epoch, 10),
		"MCP_SCHEDULER_WORKSPACE":  ws.Path,
		"MCP_SCHEDULER_BRANCH":     ws.Branch,
	}
	if len(ws.GitConfig) > 0 {
		vars["GIT_CONFIG_COUNT"] = strconv.Itoa(len(ws.GitConfig))
		for i, kv := range ws.GitConfig {
			k, v, _ := strings.Cut(kv, "=")
			vars["GIT_CONFIG_KEY_"+strconv.Itoa(i)], vars["GIT_CONFIG_VALUE_"+strconv.Itoa(i)] = k, v
		}
	}
	return vars
}

// dispatchFailed records why a dispatch could not go on.
func (s *Scheduler) dispatchFailed(ctx context.Context, f domain.Fence, stage string, cause error) error {
	s.log.Warn("dispatch failed", "mission_id", f.MissionID, "stage", stage, "err", cause)
	failure := domain.Failure{Kind: "dispatch", Tool: stage, Diagnostic: cause.Error(), Summary: stage + " failed: " + firstLine(cause.Error())}
	req := engine.FailRequest{Failure: failure, Summary: failure.Summary}
	switch {
	case errors.Is(cause, os.ErrPermission):
		epoch := f.Epoch
		_, err := s.eng.Block(ctx, engine.BlockRequest{MissionID: f.MissionID, Epoch: &epoch, Route: domain.RoutePerson,
			Kind: "environment", Reason: "permission denied while preparing the attempt: " + firstLine(cause.Error()),
			DecisionRequired: "grant the permission (or change the configuration), then resolve this escalation with retry",
			Evidence:         []string{cause.Error()}}, "scheduler")
		return ignoreLost(err)
	case stage == "start" && missingProgram(cause):
		epoch := f.Epoch
		_, err := s.eng.Block(ctx, engine.BlockRequest{MissionID: f.MissionID, Epoch: &epoch, Route: domain.RoutePerson,
			Kind: "environment", Reason: "the agent program was not found: " + firstLine(programDetail(cause)),
			DecisionRequired: "install the program or fix the profile's command (mcp-scheduler doctor checks every profile), then resolve this escalation with retry",
			Evidence:         []string{cause.Error()}}, "scheduler")
		return ignoreLost(err)
	case stage == "workspace" && recoverable(cause):
		req.Failure.Kind = domain.FailureWorkspace
	case stage == "workspace", stage == "brief", stage == "start":
		req.Final = true
		if stage == "start" {
			req.Failure.Kind = domain.FailureCrash
		}
	}
	_, err := s.eng.Fail(ctx, f, req)
	return ignoreLost(err)
}

// missingProgram reports whether starting the agent failed because its program does not
// exist (not on PATH, or no file at the configured path): a toolchain problem a person fixes,
// not a crash of the mission.
func missingProgram(err error) bool { return errors.Is(err, runner.ErrProgramNotFound) }

// programDetail is what a missing-program error says after the runner's own words ("agent
// program not found: agent program \"x\": …" becomes "\"x\": …"), so that the escalation's
// reason says "agent program" once (the evidence keeps the whole error).
func programDetail(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, runner.ErrProgramNotFound.Error()+": "); ok {
		msg = after
	}
	return strings.TrimPrefix(msg, "agent program ")
}

// recoverable reports whether a workspace failure may pass by itself (a lock held too long,
// a git process that timed out, a remote that could not be reached — the network, a
// partition, the server) rather than needing a change.
func recoverable(err error) bool {
	if errors.Is(err, worktree.ErrLockBusy) || errors.Is(err, worktree.ErrConcurrentChange) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, worktree.ErrRemoteFailed) {
		return true
	}
	var ge *worktree.GitError
	return errors.As(err, &ge) && ge.ExitCode == -1
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
