package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Workspace is where an attempt works, as the workspace manager made it.
type Workspace struct {
	Path       string `json:"path"`
	Branch     string `json:"branch,omitempty"`
	BaseCommit string `json:"base_commit,omitempty"`
	Strategy   string `json:"strategy"`
	ReadOnly   bool   `json:"read_only,omitempty"`
	Resumed    bool   `json:"resumed,omitempty"`
	// RepoID names the repository among the workspace manager's, and TargetBranch is the
	// branch the workspace was made from; the landing of the attempt needs both. Stored in
	// the workspace record, not shown to agents.
	RepoID       string `json:"-"`
	TargetBranch string `json:"-"`
	// RemoteURL, for a remote-branch attempt (ClaimRequest.RemoteBranch), is the git remote
	// holding Branch: the agent fetches it, pushes its commits to it and completes; Path is
	// then where no directory exists.
	RemoteURL string `json:"remote_url,omitempty"`
	// Notes say what the workspace holds differently from the person's checkout (Git LFS
	// files left as pointers, submodules left empty and why, or populated from the module
	// store); the agent's brief repeats them. Stored in the workspace record.
	Notes []string `json:"notes,omitempty"`
}

// ClaimRequest is a pull-mode agent asking for work (claim_mission).
type ClaimRequest struct {
	AgentID      string
	Capabilities []string
	Personas     []string
	Repository   string
	// AuthenticatedBy is the name of the bearer token the claim came with over HTTP ("" over
	// stdio or without a token): recorded beside the lease owner (AgentID) in the run
	// record, never compared with it (docs/configuration.md, "Tokens").
	AuthenticatedBy string
	// Wait is how long to wait for work when nothing is runnable (0: answer at once). The
	// wait ends as soon as a committed change could make work runnable (in-process signal).
	Wait time.Duration
	// RemoteBranch asks for the attempt's branch on the repository's git remote instead of a
	// workspace on the serving node's disk (an agent on another host). Repository must name a
	// repository named by a git remote.
	RemoteBranch bool
	// Node is the node lease of the scheduler node serving the claim (cluster mode; nil on a
	// single node): the acquire is fenced by it and records the node, whose disk holds the
	// workspace.
	Node *NodeFence
}

// Claimed is what a pull-mode agent gets: the mission (running, its lease epoch), its
// workspace, and how often to heartbeat.
type Claimed struct {
	Mission   domain.Mission `json:"mission"`
	Workspace Workspace      `json:"workspace"`
	// HeartbeatInterval is how often to heartbeat (a third of the lease TTL).
	HeartbeatInterval time.Duration `json:"-"`
	// HeartbeatSeconds is HeartbeatInterval in whole seconds, for JSON.
	HeartbeatSeconds int `json:"heartbeat_seconds"`
}

// MaxClaimWait bounds ClaimRequest.Wait.
const MaxClaimWait = 10 * time.Minute

// A claim is taken in steps, so that the layer that makes workspaces (the scheduler's pull
// service, engine/scheduler/claim.go) calls down into the engine and never the other way:
//
//	p, err := e.BeginClaim(ctx, req)   // wait for work, acquire and start it, keep its lease alive
//	m, err := p.Mission(ctx)           // the whole mission, to make its workspace from
//	c, err := p.HandOver(ctx, ws, run) // record the workspace and start the caller's lease clock
//	                                   // (or p.Fail(ctx, err) when the workspace could not be made)
//
// The lease the caller gets runs from the hand-over, never from the acquire: in between the
// engine renews it itself, however long the workspace takes.

// BeginClaim acquires and starts the next runnable mission for an external agent and keeps
// its lease renewed (every third of the TTL) until the claim is handed over or failed. It
// waits up to req.Wait for work: ErrNoWork or ErrPaused when none came, ctx's error when the
// request ended first, a *domain.FieldError for a bad request. Nothing is handed to the agent yet:
// exactly one of HandOver or Fail must follow (or a failed Mission, which ends the claim).
func (e *Engine) BeginClaim(ctx context.Context, req ClaimRequest) (*PendingClaim, error) {
	if req.Wait < 0 || req.Wait > MaxClaimWait {
		return nil, domain.Invalid("wait_seconds", fmt.Sprintf("%v is out of range", req.Wait), "wait 0 to 600 seconds")
	}
	a, err := e.acquireWaiting(ctx, req)
	if err != nil {
		return nil, err
	}
	ttl := e.opt.LeaseTTL
	p := &PendingClaim{e: e, acquired: a, done: make(chan struct{}),
		m:   domain.Mission{ID: a.ID, VoyageID: a.VoyageID, State: a.State, Attempt: a.Attempt, Lease: a.Lease, Profile: a.Profile},
		out: Claimed{HeartbeatInterval: ttl / 3, HeartbeatSeconds: int((ttl / 3).Seconds())}}
	p.wg.Go(func() { p.renew(context.WithoutCancel(ctx)) })
	return p, nil
}

// acquireWaiting acquires (and starts) the next runnable mission for req, waiting up to
// req.Wait for one: the wait ends early on any committed change that could make work
// runnable (the hub), and re-tries the acquire then.
func (e *Engine) acquireWaiting(ctx context.Context, req ClaimRequest) (Acquired, error) {
	sub := e.hub.Subscribe()
	defer sub.Close()
	deadline := time.Now().Add(req.Wait)
	for {
		a, err := e.acquireLease(ctx, AcquireRequest{AgentID: req.AgentID, Node: req.Node, Capabilities: req.Capabilities,
			Personas: req.Personas, Repository: req.Repository, Start: true})
		if err == nil || (!errors.Is(err, domain.ErrNoWork) && !errors.Is(err, domain.ErrPaused)) {
			return a, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return a, err
		}
		sub.Take()
		if !sub.Wait(ctx, left) && ctx.Err() != nil {
			return a, ctx.Err()
		}
	}
}

// PendingClaim is a claim between its acquire and its hand-over: the mission is running
// under the claiming agent's name, the engine renews its lease, and the agent has been given
// nothing yet. It is not for concurrent use.
type PendingClaim struct {
	e        *Engine
	acquired Acquired
	m        domain.Mission // the lease as acquired; the whole mission once Mission read it
	read     bool
	out      Claimed

	done  chan struct{}
	wg    sync.WaitGroup
	lost  error // set by renew before it returns: the lease went while the claim was pending
	ended bool
}

// errClaimEnded is a claim used after it ended (a bug of the caller).
var errClaimEnded = errors.New("engine: this claim was already handed over or failed")

// renew renews the lease every third of the TTL until the claim ends. A lease lost meanwhile
// (cancelled, blocked, reaped) stops the renewals and is reported by end: the preparation is
// not interrupted, so git is never stopped half-way and leaves nothing behind (the workspace
// of a mission nobody holds is cleaned up like any other).
func (p *PendingClaim) renew(ctx context.Context) {
	t := time.NewTicker(max(p.e.opt.LeaseTTL/3, time.Millisecond))
	defer t.Stop()
	f := p.acquired.Fence()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		_, err := p.e.RenewLease(ctx, f)
		if errors.Is(err, domain.ErrLeaseLost) || errors.Is(err, domain.ErrNotFound) {
			p.lost = err
			return
		}
		if err != nil {
			p.e.log.Warn("claim: could not renew the lease while preparing the workspace; trying again", "mission_id", f.MissionID, "err", err)
		}
	}
}

// end stops the renewals and returns the loss they noticed (nil while ctx is done: then the
// caller's departure is what happened). errClaimEnded when the claim had already ended.
func (p *PendingClaim) end(ctx context.Context) (lost, err error) {
	if p.ended {
		return nil, errClaimEnded
	}
	p.ended = true
	close(p.done)
	p.wg.Wait()
	if ctx.Err() != nil {
		return nil, nil
	}
	return p.lost, nil
}

// Fence is the claimed attempt's fence (mission id and epoch).
func (p *PendingClaim) Fence() domain.Fence { return p.acquired.Fence() }

// Mission returns the whole claimed mission (read once, under the renewals), which the
// workspace is made from. When it cannot be read the claim ends here: the mission is given
// back (released, with the reason recorded) and the error returned; a request that ended
// meanwhile abandons the attempt instead (no budget) and returns ctx's error.
func (p *PendingClaim) Mission(ctx context.Context) (domain.Mission, error) {
	if p.read {
		return p.m, nil
	}
	if p.ended {
		return p.m, errClaimEnded
	}
	full, err := p.e.readAcquired(ctx, p.acquired)
	if err == nil {
		p.m, p.read = full, true
		return full, nil
	}
	if _, eerr := p.end(ctx); eerr != nil {
		return p.m, eerr
	}
	if ctx.Err() != nil {
		return p.m, p.e.claimFailed(ctx, p.m, err)
	}
	why := "claim: could not read the mission just acquired: " + err.Error()
	return p.m, errors.Join(err, p.e.Release(context.WithoutCancel(ctx), p.Fence(), why))
}

// HandOver ends the claim by giving the mission to the caller: it stores the run record (nil:
// {"mode":"pull","agent":…}) and the workspace record (none when ws has no path) with the
// attempt.launched event in one write fenced by the epoch, and starts the caller's lease
// clock (LeaseTTL from now). Errors, each settling the attempt so that nothing stays
// half-claimed:
//   - the mission was cancelled, blocked or re-leased while pending: *ClaimLostError (wraps
//     ErrNoWork), costing it nothing;
//   - the request ended before the hand-over: the attempt is abandoned (no budget), ctx's error;
//   - the write failed: the attempt fails (kind workspace), *ClaimError.
func (p *PendingClaim) HandOver(ctx context.Context, ws Workspace, run json.RawMessage) (Claimed, error) {
	lost, err := p.end(ctx)
	if err != nil {
		return p.out, err
	}
	if lost != nil {
		return p.out, p.e.claimFailed(ctx, p.m, lost)
	}
	if len(run) == 0 {
		if run, err = json.Marshal(map[string]any{"mode": "pull", "agent": p.m.Lease.Owner}); err != nil {
			return p.out, err
		}
	}
	got, err := p.e.handOver(ctx, p.Fence(), run, &ws)
	if err != nil {
		return p.out, p.e.claimFailed(ctx, p.m, err)
	}
	if ctx.Err() != nil { // nobody is left to receive it
		return p.out, p.e.claimFailed(ctx, p.m, ctx.Err())
	}
	out := p.out
	out.Mission, out.Workspace = got, ws
	return out, nil
}

// Fail ends a claim whose workspace could not be made (cause says why): the attempt fails
// with failure kind workspace, within the retry budget, and Fail returns a *ClaimError naming
// the mission, the cause and the decision. A mission lost while pending returns a
// *ClaimLostError instead, and a request that ended abandons the attempt (ctx's error), as in
// HandOver.
func (p *PendingClaim) Fail(ctx context.Context, cause error) error {
	lost, err := p.end(ctx)
	if err != nil {
		return err
	}
	if lost != nil {
		cause = lost // that, not what the preparation made of it, is what happened
	}
	if cause == nil {
		cause = errors.New("the workspace could not be prepared (no cause given)")
	}
	return p.e.claimFailed(ctx, p.m, cause)
}

// handOver stores the claim's run record and workspace record and starts the caller's lease
// clock: the lease expires LeaseTTL from now, the moment the result is ready. Fenced by the
// epoch.
func (e *Engine) handOver(ctx context.Context, f domain.Fence, run json.RawMessage, ws *Workspace) (domain.Mission, error) {
	if !json.Valid(run) {
		return domain.Mission{}, domain.Invalid("run", "is not valid JSON", "")
	}
	var m domain.Mission
	err := e.update(ctx, "scheduler", func(o *op) error {
		var err error
		if m, err = o.fenced(f); err != nil {
			return err
		}
		g := Guard{State: m.State, Epoch: m.Lease.Epoch}
		m.Run, m.UpdatedAt, m.Lease.ExpiresAt = run, o.now, o.now.Add(o.e.opt.LeaseTTL)
		if err := o.save(&m, g); err != nil {
			return err
		}
		if err := o.putWorkspace(&m, ws); err != nil {
			return err
		}
		return o.emit("attempt.launched", &m, "", launchedData(run, ws))
	})
	e.forgetRenewal(f) // the caller's first heartbeat writes (and records contact)
	return m, err
}
