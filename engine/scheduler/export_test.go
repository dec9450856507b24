package scheduler

import (
	"context"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
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

// SetBeforeHandOver makes p call f once a claim's workspace is made, before the hand-over
// (tests take the mission away there).
func SetBeforeHandOver(p *PullService, f func(m domain.Mission)) { p.beforeHandOver = f }
