package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
}

// WorkspacePreparer creates (or, for a resumed attempt, re-opens) the workspace of m's
// current attempt and returns it with the run record to store on the mission (Mission.Run,
// opaque to the engine). The scheduler wires one built on worktree.Manager.
type WorkspacePreparer func(ctx context.Context, m *Mission) (Workspace, json.RawMessage, error)

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
	Mission   Mission   `json:"mission"`
	Workspace Workspace `json:"workspace"`
	// HeartbeatInterval is how often to heartbeat (a third of the lease TTL).
	HeartbeatInterval time.Duration `json:"-"`
	// HeartbeatSeconds is HeartbeatInterval in whole seconds, for JSON.
	HeartbeatSeconds int `json:"heartbeat_seconds"`
}

// MaxClaimWait bounds ClaimRequest.Wait.
const MaxClaimWait = 10 * time.Minute

// Claim acquires and starts the next runnable mission for an external agent in one step,
// creates its workspace before returning, and waits up to req.Wait for work. A workspace that
// cannot be created fails the attempt (kind workspace) and the claim returns the error.
func (e *Engine) Claim(ctx context.Context, req ClaimRequest, prepare WorkspacePreparer) (Claimed, error) {
	if req.Wait < 0 || req.Wait > MaxClaimWait {
		return Claimed{}, invalid("wait_seconds", fmt.Sprintf("%v is out of range", req.Wait), "wait 0 to 600 seconds")
	}
	sub := e.hub.Subscribe()
	defer sub.Close()
	deadline := time.Now().Add(req.Wait)
	for {
		m, err := e.Acquire(ctx, AcquireRequest{AgentID: req.AgentID, Capabilities: req.Capabilities,
			Personas: req.Personas, Repository: req.Repository, Start: true})
		if err == nil {
			return e.claimed(ctx, m, prepare)
		}
		if !errors.Is(err, ErrNoWork) && !errors.Is(err, ErrPaused) {
			return Claimed{}, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return Claimed{}, err
		}
		sub.Take()
		if !sub.Wait(ctx, left) && ctx.Err() != nil {
			return Claimed{}, ctx.Err()
		}
	}
}

func (e *Engine) claimed(ctx context.Context, m Mission, prepare WorkspacePreparer) (Claimed, error) {
	out := Claimed{Mission: m, HeartbeatInterval: e.opt.LeaseTTL / 3, HeartbeatSeconds: int((e.opt.LeaseTTL / 3).Seconds())}
	if prepare == nil {
		return out, nil
	}
	ws, run, err := prepare(ctx, &m)
	if err != nil {
		_, ferr := e.Fail(context.WithoutCancel(ctx), m.Fence(), FailRequest{
			Failure: Failure{Kind: KindWorkspace, Tool: "git", Diagnostic: err.Error(), Summary: "workspace could not be created"}})
		return out, errors.Join(fmt.Errorf("prepare workspace for %s: %w", m.ID, err), ferr)
	}
	if len(run) == 0 {
		if run, err = json.Marshal(map[string]any{"mode": "pull", "agent": m.Lease.Owner, "workspace": ws}); err != nil {
			return out, err
		}
	}
	if err := e.SetRun(ctx, m.Fence(), run); err != nil {
		return out, err
	}
	out.Workspace = ws
	out.Mission.Run = run
	return out, nil
}

// KindWorkspace is the failure kind of an attempt whose workspace could not be made.
const KindWorkspace = "workspace"
