package scheduler

import (
	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// SetCrashPoint makes s call f between the steps of every dispatch (crash-injection tests
// end the process there).
func SetCrashPoint(s *Scheduler, f func(stage string)) { s.testCrashPoint = f }

// ChooseModel exposes the planner's model choice for a configured profile to the assignment
// table tests.
func ChooseModel(m *engine.Mission, p agent.Profile, avoid string) (string, bool) {
	return planner.ChooseModel(m, plannerProfile(p), avoid)
}

// Confidence exposes the smoothed confidence of a profile for a persona given its history
// (total attempts, completed ones).
func Confidence(p agent.Profile, _ string, total, completed int) float64 {
	return planner.Confidence(plannerProfile(p), [2]int{total, completed})
}
