package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// supervisor is the supervision service: the managed agents this process supervises. It
// owns the launch bookkeeping (launching: missions whose launch runs in the background), the
// attempts it watches (procs: one goroutine each, turning the agent's events into engine
// calls until it ends, then collecting its outcome), their leases (renewed between ticks by
// the loop Start runs, each with a fence timer that stops an agent whose lease could not be
// renewed), and how they end on shutdown (Stop: detached, or stopped by
// StopAgentsOnShutdown). RunOnce is the tick's supervision step.
type supervisor struct {
	eng  *engine.Engine
	run  *runner.Runner
	cfg  Config
	log  *slog.Logger
	host supervisorHost
	life lifecycle
	// prices turn reported tokens into dollars: Config.Prices at New, replaced whole by
	// Scheduler.SetPrices (a configuration reload).
	prices atomic.Pointer[engine.Prices]

	mu        sync.Mutex
	procs     map[string]*attemptRun // mission id → the attempt this process supervises
	launching map[string]bool        // mission ids whose launch runs in the background
	stopped   bool                   // Stop began: new agents are detached at once

	launches sync.WaitGroup // launches in flight (launch)
	watchers sync.WaitGroup // supervise goroutines and the agent stops they start (stopAsync)
}

// supervisorHost is what the supervisor needs from the scheduler that runs it.
type supervisorHost struct {
	wake    func()       // an agent ended: what it did may unblock work
	phase   func(string) // status: collecting results
	leading func() bool  // whether this process leads (only a leader renews its agents' leases)
	// verify checks, before a completed attempt is recorded, that its work still exists
	// (workspaces.verify).
	verify func(ctx context.Context, repository string, w worktree.Workspace) error
	// publish pushes a completed attempt's branch to its remote repository in cluster mode, so
	// that any node can land it, and returns how to take it back (workspaces.publish).
	publish func(ctx context.Context, m *domain.Mission, w worktree.Workspace) (undo func())
}

func newSupervisor(eng *engine.Engine, run *runner.Runner, cfg Config, host supervisorHost) *supervisor {
	sv := &supervisor{eng: eng, run: run, cfg: cfg, log: cfg.Logger, host: host, life: lifecycle{name: "supervisor"},
		procs: map[string]*attemptRun{}, launching: map[string]bool{}}
	sv.prices.Store(&cfg.Prices)
	return sv
}

// Start runs the lease keeper of the supervised agents until Stop (or ctx ends): every
// LeaderLease/5, while this process leads, the leases whose renewal is due are renewed, so a
// long tick loses none. A second Start is ErrStarted.
func (sv *supervisor) Start(ctx context.Context) error { return sv.life.start(ctx, sv.keep) }

func (sv *supervisor) keep(ctx context.Context) {
	every(ctx, sv.cfg.LeaderLease/5, func() {
		if !sv.host.leading() {
			return // a follower supervises nothing: its agents were detached when it lost the lead
		}
		if err := sv.renewAgents(ctx); err != nil && ctx.Err() == nil {
			sv.log.Warn("agent leases not renewed", "err", err)
		}
	})
}

// RunOnce is one supervision step: agents whose mission is no longer theirs (cancelled,
// blocked, re-leased by someone else) are stopped, the leases due for renewal renewed, and
// attempts that share a repository marked (their failures may be interference). The runner
// itself stops stalled and timed-out agents.
func (sv *supervisor) RunOnce(ctx context.Context) error {
	fences, err := sv.eng.LeaseFences(ctx) // ids and epochs only: this runs every tick
	if err != nil {
		return err
	}
	live := map[domain.Fence]bool{}
	for _, f := range fences {
		live[f] = true
	}
	byRepo := map[string][]*attemptRun{}
	for _, a := range sv.supervised() {
		if !live[a.fence] {
			sv.stopAsync(a, runner.ReasonLeaseLost)
			continue
		}
		byRepo[a.mission.Repository] = append(byRepo[a.mission.Repository], a)
	}
	err = sv.renewAgents(ctx)
	for _, group := range byRepo {
		if len(group) > 1 {
			for _, a := range group {
				a.parallel.Store(true)
			}
		}
	}
	return err
}

// launch runs fn — the slow part of a dispatch: workspace, brief, process — in the
// background, with missionID counted as alive (recovery and reaping leave it alone) until fn
// returns; fn ends by adopting the agent it launched, or by recording why it could not.
func (sv *supervisor) launch(missionID string, fn func()) {
	sv.mu.Lock()
	sv.launching[missionID] = true
	sv.mu.Unlock()
	sv.launches.Add(1)
	go func() {
		defer sv.launches.Done()
		defer func() {
			sv.mu.Lock()
			delete(sv.launching, missionID)
			sv.mu.Unlock()
		}()
		fn()
	}()
}

// alive reports whether m's current attempt is a managed agent this process supervises or
// is launching right now (recovery must leave such a mission alone).
func (sv *supervisor) alive(m domain.Mission) bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.launching[m.ID] {
		return true
	}
	a, ok := sv.procs[m.ID]
	return ok && a.fence == m.Fence()
}

// supervised returns the attempts supervised now.
func (sv *supervisor) supervised() []*attemptRun {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	out := make([]*attemptRun, 0, len(sv.procs))
	for _, a := range sv.procs {
		out = append(out, a)
	}
	return out
}

// busy reports whether any agent is supervised.
func (sv *supervisor) busy() bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return len(sv.procs) > 0
}

// canYield reports whether the agent of a supervised mission can be asked to yield (false
// when the mission is not supervised here).
func (sv *supervisor) canYield(missionID string) bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	a, ok := sv.procs[missionID]
	return ok && a.proc.CanYield()
}

// askYield tells a supervised agent about its preemption (nothing when it is not ours).
func (sv *supervisor) askYield(missionID, reason string) {
	sv.mu.Lock()
	a, ok := sv.procs[missionID]
	sv.mu.Unlock()
	if ok {
		a.proc.RequestYield(reason)
	}
}

// detachAll stops watching every supervised agent (leadership was lost: the new leader
// re-attaches them; they keep working meanwhile).
func (sv *supervisor) detachAll() {
	for _, a := range sv.supervised() {
		a.detach()
	}
}

// Stop ends the lease keeper, waits for the launches in flight, then detaches from every
// supervised agent (they keep working; the next leader collects them) or, with
// StopAgentsOnShutdown, stops them; it returns when every goroutine the supervisor started
// has returned. Agents adopted after Stop began are detached at once. Stop before Start is
// fine. An agent that does not stop is logged with its mission (its process group may still
// run: a person must look) and the others are stopped all the same.
func (sv *supervisor) Stop() {
	sv.life.stop()
	sv.mu.Lock()
	sv.stopped = true
	sv.mu.Unlock()
	sv.launches.Wait()
	for _, a := range sv.supervised() {
		if !sv.cfg.StopAgentsOnShutdown {
			a.detach()
			continue
		}
		if err := a.proc.Stop(runner.ReasonCancelled); err != nil {
			sv.log.Error("agent not stopped on shutdown: its process group may still run", "mission_id", a.fence.MissionID,
				"pid", a.proc.PID(), "err", err)
		}
	}
	sv.watchers.Wait()
}
