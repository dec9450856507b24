package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"sync"
	"time"
)

// Workspace is where an attempt works, as the workspace preparer made it.
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
}

// WorkspacePreparer creates (or, for a resumed attempt, re-opens) the workspace of m's
// current attempt and returns it with the run record to store on the mission (Mission.Run,
// opaque to the engine). The scheduler wires one built on worktree.Manager.
type WorkspacePreparer func(ctx context.Context, m *domain.Mission) (Workspace, json.RawMessage, error)

// ClaimRequest is a pull-mode agent asking for work (claim_mission).
type ClaimRequest struct {
	AgentID      string
	Capabilities []string
	Personas     []string
	Repository   string
	// Wait is how long to wait for work when nothing is runnable (0: answer at once). The
	// wait ends as soon as a committed change could make work runnable (in-process signal).
	Wait time.Duration
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

// maxClaimLosses is how many missions one claim call may lose while preparing their
// workspaces (cancelled, blocked or re-leased meanwhile) before it gives up and says so.
const maxClaimLosses = 3

// Claim acquires and starts the next runnable mission for an external agent, creates its
// workspace, and only then hands it over: the lease the caller gets runs from the moment the
// result is ready, never from the acquire (while the workspace is prepared the engine keeps
// the lease renewed itself). It waits up to req.Wait for work (ErrNoWork, ErrPaused after).
//
// What can go wrong, and what the caller is told:
//   - a workspace that cannot be created fails the attempt (kind workspace, within the retry
//     budget) and Claim returns a *ClaimError naming the mission and the cause;
//   - a mission cancelled, blocked or taken by another agent while its workspace was prepared
//     costs it nothing and Claim moves on to the next one; after maxClaimLosses such losses
//     it returns a *ClaimLostError (which wraps ErrNoWork);
//   - a request that ends before the result is ready abandons the attempt (no budget; see
//     abandon) and Claim returns ctx's error.
func (e *Engine) Claim(ctx context.Context, req ClaimRequest, prepare WorkspacePreparer) (Claimed, error) {
	if req.Wait < 0 || req.Wait > MaxClaimWait {
		return Claimed{}, domain.Invalid("wait_seconds", fmt.Sprintf("%v is out of range", req.Wait), "wait 0 to 600 seconds")
	}
	sub := e.hub.Subscribe()
	defer sub.Close()
	deadline := time.Now().Add(req.Wait)
	var lost []*ClaimLostError
	for {
		a, err := e.acquireLease(ctx, AcquireRequest{AgentID: req.AgentID, Capabilities: req.Capabilities,
			Personas: req.Personas, Repository: req.Repository, Start: true})
		if err == nil {
			c, err := e.claimed(ctx, a, prepare)
			var l *ClaimLostError
			if errors.As(err, &l) && len(lost)+1 < maxClaimLosses {
				lost = append(lost, l)
				continue
			}
			return c, err
		}
		if !errors.Is(err, domain.ErrNoWork) && !errors.Is(err, domain.ErrPaused) {
			return Claimed{}, err
		}
		left := time.Until(deadline)
		if left <= 0 && len(lost) > 0 && errors.Is(err, domain.ErrNoWork) {
			return Claimed{}, lost[len(lost)-1] // what happened to the work there was
		}
		if left <= 0 {
			return Claimed{}, err
		}
		sub.Take()
		if !sub.Wait(ctx, left) && ctx.Err() != nil {
			return Claimed{}, ctx.Err()
		}
	}
}

// claimed prepares the acquired mission's workspace under a lease the engine keeps alive,
// then hands the mission over (run record and a fresh lease expiry in one write, which
// returns the whole mission).
func (e *Engine) claimed(ctx context.Context, a Acquired, prepare WorkspacePreparer) (Claimed, error) {
	f := a.Fence()
	m := domain.Mission{ID: a.ID, VoyageID: a.VoyageID, State: a.State, Attempt: a.Attempt, Lease: a.Lease, Profile: a.Profile}
	ttl := e.opt.LeaseTTL
	out := Claimed{HeartbeatInterval: ttl / 3, HeartbeatSeconds: int((ttl / 3).Seconds())}
	var ws Workspace
	var run json.RawMessage
	if prepare != nil {
		var readErr error
		readThenPrepare := func(ctx context.Context, _ *domain.Mission) (Workspace, json.RawMessage, error) {
			full, err := e.readAcquired(ctx, a) // under the renewals, like the preparation
			if err != nil {
				readErr = err
				return Workspace{}, nil, err
			}
			m = full
			return prepare(ctx, &m)
		}
		var err error
		ws, run, err = e.prepareKept(ctx, &m, readThenPrepare)
		if readErr != nil && ctx.Err() == nil { // give it back: nothing was prepared
			why := "claim: could not read the mission just acquired: " + readErr.Error()
			return out, errors.Join(readErr, e.Release(context.WithoutCancel(ctx), f, why))
		}
		if err != nil {
			return out, e.claimFailed(ctx, m, err)
		}
	}
	if len(run) == 0 {
		var err error
		if run, err = json.Marshal(map[string]any{"mode": "pull", "agent": m.Lease.Owner}); err != nil {
			return out, err
		}
	}
	got, err := e.handOver(ctx, f, run, &ws)
	if err != nil {
		return out, e.claimFailed(ctx, m, err)
	}
	if ctx.Err() != nil { // nobody is left to receive it
		return out, e.claimFailed(ctx, m, ctx.Err())
	}
	out.Mission, out.Workspace = got, ws
	return out, nil
}

// prepareKept runs prepare while a goroutine renews m's lease every third of the TTL. A lease
// lost meanwhile (cancelled, blocked, reaped) stops the renewals and is returned once prepare
// is done: the preparation is not interrupted, so git is never stopped half-way and leaves
// nothing behind (the workspace of a mission nobody holds is cleaned up like any other).
func (e *Engine) prepareKept(ctx context.Context, m *domain.Mission, prepare WorkspacePreparer) (Workspace, json.RawMessage, error) {
	done := make(chan struct{})
	f, id := m.Fence(), m.ID // prepare may replace *m while the renewals run
	var lost error
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(max(e.opt.LeaseTTL/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			_, err := e.RenewLease(context.WithoutCancel(ctx), f)
			if errors.Is(err, domain.ErrLeaseLost) || errors.Is(err, domain.ErrNotFound) {
				lost = err
				return
			}
			if err != nil {
				e.log.Warn("claim: could not renew the lease while preparing the workspace; trying again", "mission_id", id, "err", err)
			}
		}
	})
	ws, run, err := prepare(ctx, m)
	close(done)
	wg.Wait()
	if lost != nil && ctx.Err() == nil {
		return ws, run, lost // that, not what prepare made of it, is what happened
	}
	return ws, run, err
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

// claimFailed turns what went wrong after a claim's acquire into what the caller is told,
// settling the attempt so that nothing stays half-claimed.
func (e *Engine) claimFailed(ctx context.Context, m domain.Mission, err error) error {
	var lost *domain.LeaseLostError
	switch {
	case errors.As(err, &lost):
		return &ClaimLostError{MissionID: m.ID, State: lost.State, Epoch: m.Lease.Epoch, Current: lost.Current}
	case ctx.Err() != nil:
		why := "the claim's request ended before its result was ready (the caller went away or timed out)"
		if aerr := e.abandonClaim(ctx, m.Fence(), why); aerr != nil && !errors.Is(aerr, domain.ErrLeaseLost) {
			return errors.Join(ctx.Err(), aerr)
		}
		return ctx.Err()
	}
	failed, ferr := e.Fail(context.WithoutCancel(ctx), m.Fence(), FailRequest{
		Failure: domain.Failure{Kind: domain.FailureWorkspace, Tool: "git", Diagnostic: err.Error(), Summary: "workspace could not be created"}})
	if errors.As(ferr, &lost) { // lost between the failure and its record: nothing to settle
		return &ClaimLostError{MissionID: m.ID, State: lost.State, Epoch: m.Lease.Epoch, Current: lost.Current}
	}
	ce := &ClaimError{MissionID: m.ID, Attempt: m.Attempt, Err: err}
	if failed.Decision != nil {
		ce.Decision = *failed.Decision
	}
	return errors.Join(ce, ferr)
}

// ClaimError is a claim whose mission was acquired but whose workspace could not be made:
// the attempt was recorded as failed (Decision says what comes next) and nothing was handed
// over. It is a server fault, not the caller's mistake.
type ClaimError struct {
	MissionID string
	Attempt   int
	Decision  domain.Decision
	Err       error
}

func (e *ClaimError) Error() string {
	next := ""
	if e.Decision.Kind != "" {
		next = fmt.Sprintf("; the attempt was recorded as failed (decision %s: %s)", e.Decision.Kind, e.Decision.Reason)
	}
	return fmt.Sprintf("the workspace of mission %s (attempt %d) could not be prepared: %v%s; nothing was handed to you, call claim_mission again for other work",
		e.MissionID, e.Attempt, e.Err, next)
}

// Unwrap returns the preparation's error.
func (e *ClaimError) Unwrap() error { return e.Err }

// ClaimLostError is a claim whose mission was taken away while its workspace was prepared,
// before anything was handed to the caller: cancelled, blocked, or leased again after the
// engine could not renew its lease in time. It cost the mission nothing. It wraps ErrNoWork:
// the caller has nothing to stop and simply claims again.
type ClaimLostError struct {
	MissionID string
	State     domain.MissionState // the mission's state when the claim noticed
	Epoch     int64               // the epoch this claim acquired
	Current   int64               // the mission's epoch when the claim noticed
}

func (e *ClaimLostError) Error() string {
	what := "was " + string(e.State)
	switch {
	case e.Current != e.Epoch && e.State.Leased():
		what = "went to another agent (the lease lapsed before the server could renew it)"
	case e.State == domain.StatePending || e.State == domain.StateInterrupted:
		what = "was given back (the lease lapsed before the server could renew it)"
	}
	return fmt.Sprintf("mission %s %s while its workspace was being prepared, before it was handed to you; nothing was charged to it or to you: call claim_mission again",
		e.MissionID, what)
}

// Unwrap makes errors.Is(err, ErrNoWork) true.
func (e *ClaimLostError) Unwrap() error { return domain.ErrNoWork }
