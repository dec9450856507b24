package scheduler

import (
	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// SetCrashPoint makes s call f between the steps of every dispatch (crash-injection tests
// end the process there).
func SetCrashPoint(s *Scheduler, f func(stage string)) { s.testCrashPoint = f }

// ChooseModel exposes chooseModel to the assignment table tests.
func ChooseModel(m *engine.Mission, p agent.Profile, avoid string) (string, bool) {
	return chooseModel(m, p, avoid)
}

// Confidence exposes the smoothed confidence of a profile for a persona given its history
// (total attempts, completed ones).
func Confidence(p agent.Profile, persona string, total, completed int) float64 {
	s := &Scheduler{}
	pc := &planContext{outcomes: map[string][2]int{p.Name + "/" + persona: {total, completed}}}
	return s.confidence(pc, p, persona)
}
