package scheduler

import (
	"context"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// SetCrashPoint makes s call f between the steps of every dispatch (crash-injection tests
// end the process there).
func SetCrashPoint(s *Scheduler, f func(stage string)) { s.testCrashPoint = f }

// ChooseModel exposes the planner's model choice for a configured profile to the assignment
// table tests.
func ChooseModel(m *domain.Mission, p agent.Profile, avoid string) (string, bool) {
	return planner.ChooseModel(m, plannerProfile(p), avoid)
}

// Confidence exposes the smoothed confidence of a profile for a persona given its history
// (total attempts, completed ones).
func Confidence(p agent.Profile, _ string, total, completed int) float64 {
	return planner.Confidence(plannerProfile(p), [2]int{total, completed})
}

// Lander is the landing service on its own, for tests: no loop, no leadership; its workers
// run inside RunOnce, so RunOnce returns when the pass is over.
type Lander struct{ l *lander }

// NewLander returns the landing service over eng and wt with cfg's policies and clock.
func NewLander(eng *engine.Engine, wt *worktree.Manager, cfg Config) *Lander {
	host := landerHost{spawn: func(f func()) { f() }, stop: context.Background(), wake: func() {}, phase: func(string) {}}
	return &Lander{newLander(eng, wt, cfg.withDefaults(), host)}
}

// RunOnce is one pass over the landing queue (lander.runOnce).
func (l *Lander) RunOnce(ctx context.Context) error { return l.l.runOnce(ctx) }

// Supervisor is a scheduler's supervision service on its own, for tests (supervisor.go).
type Supervisor struct{ sv *supervisor }

// SupervisorOf returns s's supervision service.
func SupervisorOf(s *Scheduler) Supervisor { return Supervisor{s.sup} }

// RunOnce is one supervision step (supervisor.RunOnce).
func (v Supervisor) RunOnce(ctx context.Context) error { return v.sv.RunOnce(ctx) }

// Start runs the service's lease keeper (supervisor.Start).
func (v Supervisor) Start(ctx context.Context) error { return v.sv.Start(ctx) }

// Stop is supervisor.Stop.
func (v Supervisor) Stop() { v.sv.Stop() }

// Supervises reports whether the service watches the agent of missionID.
func (v Supervisor) Supervises(missionID string) bool {
	for _, a := range v.sv.supervised() {
		if a.fence.MissionID == missionID {
			return true
		}
	}
	return false
}

// Recovery is a scheduler's recovery and reaper service on its own, for tests (recover.go).
type Recovery struct{ r *recovery }

// RecoveryOf returns s's recovery service.
func RecoveryOf(s *Scheduler) Recovery { return Recovery{s.rec} }

// RunOnce is one recovery step (recovery.RunOnce).
func (r Recovery) RunOnce(ctx context.Context) (RecoveryReport, error) { return r.r.RunOnce(ctx, true) }

// Leadership is a scheduler's leadership service on its own, for tests (leader.go).
type Leadership struct{ l *leadership }

// LeadershipOf returns s's leadership service.
func LeadershipOf(s *Scheduler) Leadership { return Leadership{s.leader} }

// RunOnce is one leadership step (leadership.RunOnce).
func (l Leadership) RunOnce(ctx context.Context) (bool, error) { return l.l.RunOnce(ctx) }

// Start runs the leader lease keeper (leadership.Start).
func (l Leadership) Start(ctx context.Context) error { return l.l.Start(ctx) }

// Stop is leadership.Stop.
func (l Leadership) Stop(ctx context.Context) error { return l.l.Stop(ctx) }

// Keeper is the workspace keeper on its own, for tests (workspaces.go).
type Keeper struct{ ws *workspaces }

// NewKeeper returns a workspace keeper over eng, wt and run with cfg's cadence, retention
// and clock, wired to nothing else.
func NewKeeper(eng *engine.Engine, wt *worktree.Manager, run *runner.Runner, cfg Config) Keeper {
	return Keeper{newWorkspaces(eng, wt, run, cfg.withDefaults())}
}

// RunOnce is one scheduled pass, now (workspaces.RunOnce).
func (k Keeper) RunOnce(ctx context.Context) (ScheduledCleanup, error) { return k.ws.RunOnce(ctx) }

// Kick starts a scheduled pass in the background when one is due (workspaces.kick).
func (k Keeper) Kick() { k.ws.kick() }

// Stop is workspaces.Stop.
func (k Keeper) Stop() { k.ws.Stop() }

// SetBeforeHandOver makes p call f once a claim's workspace is made, before the hand-over
// (tests take the mission away there).
func SetBeforeHandOver(p *PullService, f func(m domain.Mission)) { p.beforeHandOver = f }

// MissionVars exposes the variables a managed agent of m gets for workspace ws.
func MissionVars(m *domain.Mission, ws worktree.Workspace) map[string]string {
	return missionVars(m, ws)
}
