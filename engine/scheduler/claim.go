package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// maxClaimLosses is how many missions one claim may lose while preparing their workspaces
// (cancelled, blocked or re-leased meanwhile) before it gives up and says so.
const maxClaimLosses = 3

// PullService is the pull-mode side of the scheduler: it claims work for external agents
// (claim_mission) and completes it (complete_mission). Its calls go down only — to the
// engine's claim steps (BeginClaim, then HandOver or Fail), to the workspace manager, and to
// the engine's Complete — so the engine never calls back into the scheduler. Get one with
// Scheduler.Pull; it is safe for concurrent use.
type PullService struct {
	s *Scheduler

	beforeHandOver func(m domain.Mission) // tests: runs once the workspace is made (export_test.go)
}

// Pull returns the scheduler's pull-mode service.
func (s *Scheduler) Pull() *PullService { return &PullService{s: s} }

// Claim acquires and starts the next runnable mission for an external agent, creates its
// workspace (with its brief in .mcp-scheduler/brief.md) while the engine keeps the lease
// renewed, and only then hands it over: the lease the caller gets runs from the moment the
// result is ready. It waits up to req.Wait for work (a *NoWorkError, which wraps
// domain.ErrNoWork and says why nothing fits; domain.ErrPaused after; a *domain.FieldError
// for a bad request).
//
// What can go wrong, and what the caller is told:
//   - a workspace that cannot be created fails the attempt (kind workspace, within the retry
//     budget) and Claim returns an *engine.ClaimError naming the mission and the cause;
//   - a mission cancelled, blocked or taken by another agent while its workspace was prepared
//     costs it nothing and Claim moves on to the next one; after maxClaimLosses such losses,
//     or when no other mission comes within the wait, it returns the last
//     *engine.ClaimLostError (which wraps ErrNoWork);
//   - a request that ends before the result is ready abandons the attempt (no budget) and
//     Claim returns ctx's error;
//   - an agent whose limit group is rate-limited (a fail_mission of kind rate_limit paused
//     it) is refused at once with an *engine.RateLimitedError; nothing is acquired.
func (p *PullService) Claim(ctx context.Context, req engine.ClaimRequest) (engine.Claimed, error) {
	if err := p.rateRefusal(ctx, req.AgentID); err != nil {
		return engine.Claimed{}, err
	}
	if req.RemoteBranch {
		if err := p.checkRemoteBranch(req.Repository); err != nil {
			return engine.Claimed{}, err
		}
	}
	if p.s.node != nil {
		// The workspace is made on this node's disk: the lease records the node, fenced by its
		// lease (a process that does not run its node has none and refuses).
		if req.Node = p.s.node.fence(); req.Node == nil {
			return engine.Claimed{}, fmt.Errorf("%w: this process does not run node %s yet (another process holds its lease, or it is starting); claim from another node or retry shortly",
				domain.ErrNotLeader, p.s.cfg.Node)
		}
	}
	deadline := time.Now().Add(req.Wait)
	var lost error
	for losses := 0; ; {
		pc, err := p.s.eng.BeginClaim(ctx, req)
		if err != nil {
			switch {
			case lost != nil && errors.Is(err, domain.ErrNoWork):
				return engine.Claimed{}, lost // what happened to the work there was
			case errors.Is(err, domain.ErrNoWork):
				return engine.Claimed{}, p.whyNoWork(ctx, req)
			}
			return engine.Claimed{}, err
		}
		c, err := p.prepareAndHandOver(ctx, pc, req)
		var l *engine.ClaimLostError
		if !errors.As(err, &l) {
			return c, err
		}
		if losses++; losses >= maxClaimLosses {
			return c, err
		}
		lost, req.Wait = err, max(time.Until(deadline), 0)
	}
}

// prepareAndHandOver makes the pending claim's workspace and hands the mission over, or
// fails the claim with the reason the workspace could not be made.
func (p *PullService) prepareAndHandOver(ctx context.Context, pc *engine.PendingClaim, req engine.ClaimRequest) (engine.Claimed, error) {
	m, err := pc.Mission(ctx)
	if err != nil {
		return engine.Claimed{}, err // the claim ended there, with its reason recorded
	}
	ws, run, err := p.prepare(ctx, &m, req)
	if err != nil {
		p.s.log.Warn("claim: the workspace could not be prepared", "mission_id", m.ID, "attempt", m.Attempt, "err", err)
		return engine.Claimed{}, pc.Fail(ctx, err)
	}
	if p.beforeHandOver != nil {
		p.beforeHandOver(m)
	}
	return pc.HandOver(ctx, ws, run)
}

// prepare creates the claimed attempt's workspace, writes its brief (pull-mode wording) into
// .mcp-scheduler/brief.md and returns it with the run record to store (naming the token the
// claim was authenticated with beside the agent). A remote-branch claim gets the attempt's
// branch on the remote instead, and no directory (the claim's answer carries the brief).
func (p *PullService) prepare(ctx context.Context, m *domain.Mission, req engine.ClaimRequest) (engine.Workspace, json.RawMessage, error) {
	s := p.s
	rec := RunRecord{Mode: ModePull, Attempt: m.Attempt, Agent: m.Lease.Owner, AuthenticatedBy: req.AuthenticatedBy, LaunchedAt: s.cfg.Now()}
	if req.RemoteBranch {
		ws, err := s.ws.prepareRemote(ctx, m)
		if err != nil {
			return engine.Workspace{}, nil, err
		}
		rec.Worktree, rec.RemoteURL = ws, ws.RemoteURL
		return rec.Workspace(), rec.raw(), nil
	}
	ws, err := s.prepare(ctx, m)
	if err != nil {
		return engine.Workspace{}, nil, err
	}
	rec.Worktree = ws
	brief, err := s.renderBrief(m, ws, true)
	if err != nil {
		return engine.Workspace{}, nil, err
	}
	if err := writeBrief(ws.Path, brief); err != nil {
		return engine.Workspace{}, nil, err
	}
	return rec.Workspace(), rec.raw(), nil
}

// Complete records a pull-mode attempt as completed once its work is known to exist: an
// attempt whose writable workspace was deleted before its work was committed is refused
// with a *domain.WorkspaceLostError and nothing is written (workspaces.verify, the rule managed
// completions obey too); the agent then fails the attempt and the mission runs again in a
// fresh workspace. A remote-branch attempt's pushed commits are fetched first, and one with
// nothing pushed is refused with a *domain.NothingPushedError (nothing written, the lease
// kept). In cluster mode the attempt's branch is then published to a remote
// repository (workspaces.publish). A fence that is not the mission's current lease is left to the engine,
// which answers lease lost; otherwise the engine's Complete errors. A completion lifts the
// agent's limit group's window, as a managed attempt's does.
func (p *PullService) Complete(ctx context.Context, f domain.Fence, res domain.WorkerResult) (domain.Mission, error) {
	d, err := p.s.eng.GetMission(ctx, f.MissionID)
	undo := func() {}
	switch {
	case err != nil && !domain.CallerError(err):
		return domain.Mission{}, err
	case err == nil && d.Mission.Lease.Epoch == f.Epoch && d.Mission.State.Leased():
		rec, err := p.s.runWith(ctx, &d.Mission)
		if err != nil {
			return domain.Mission{}, err
		}
		if err := p.fetchPushed(ctx, &d.Mission, rec.Worktree); err != nil {
			return domain.Mission{}, err
		}
		if err := p.s.ws.verify(ctx, d.Mission.Repository, rec.Worktree); err != nil {
			return domain.Mission{}, err
		}
		undo = p.s.ws.publish(ctx, &d.Mission, rec.Worktree)
	}
	m, err := p.s.eng.Complete(ctx, f, res)
	refusedUnpublish(err, undo)
	if err == nil && d.Mission.ID != "" {
		p.rateRoomAfter(ctx, d.Mission.Profile, m.ID, d.Mission.StartedAt) // the model answered: the window has room
	}
	return m, err
}

// checkRemoteBranch refuses a remote-branch claim whose repository is not one named by a git
// remote: only there does the attempt's branch live somewhere an agent on another host can
// reach.
func (p *PullService) checkRemoteBranch(repository string) error {
	hint := "name a repository configured with [[repositories]] remote (its name, as missions store it), or claim without workspace remote_branch"
	if repository == "" {
		return &domain.FieldError{Field: "repository", Problem: "workspace remote_branch needs the repository whose remote holds the branch", Hint: hint}
	}
	if !filepath.IsAbs(repository) && worktree.ValidateRemoteName(repository) != nil {
		return &domain.FieldError{Field: "repository", Hint: hint,
			Problem: fmt.Sprintf("%q is neither the name of a repository named by a git remote nor an absolute path", domain.Clip(repository, 100))}
	}
	repo, err := p.s.ws.wt.Open(repository)
	if err != nil {
		return &domain.FieldError{Field: "repository", Problem: err.Error(), Hint: hint}
	}
	if _, ok := repo.Remote(); !ok {
		return &domain.FieldError{Field: "repository", Problem: repository + " is a local repository: it has no remote to hold the attempt's branch", Hint: hint}
	}
	return nil
}

// fetchPushed brings a remote-branch attempt's pushed commits into this node's clone before
// its completion is verified; a writable one whose branch is still at its start is refused
// (*domain.NothingPushedError). Other workspaces are left alone.
func (p *PullService) fetchPushed(ctx context.Context, m *domain.Mission, w worktree.Workspace) error {
	if w.RemoteURL == "" {
		return nil
	}
	repo, err := p.s.ws.wt.Open(m.Repository)
	if err != nil {
		return err
	}
	tip, err := p.s.ws.wt.FetchRemoteBranch(ctx, repo, w)
	if err != nil {
		return err
	}
	if !w.ReadOnly && tip == w.BaseCommit {
		return &domain.NothingPushedError{MissionID: m.ID, Branch: w.Branch, RemoteURL: w.RemoteURL}
	}
	return nil
}
