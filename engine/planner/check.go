package planner

import (
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// AgentCheck is the voyage settlement's agent rule (engine.AgentCheck) from the same snapshot
// and plan: nil when a profile can take a runnable mission, else the reason the planner
// records — the plan's own hold when it held the mission for want of an agent (settling a
// moment later must not see the grace period end before the planner does), or what
// unavailable says given the holds the plan leaves in place.
func AgentCheck(s Snapshot, p Plan, now time.Time, lim Limits, profiles []Profile) engine.AgentCheck {
	st := newState(s, now, lim, profiles)
	holds := make(map[string]engine.Hold, len(p.Held))
	for _, h := range p.Held {
		holds[h.MissionID] = h
	}
	return func(m *domain.Mission) *engine.Reason {
		// Eligibility does not depend on the model to avoid: only the choice does.
		if el, _ := st.eligible(m, ""); len(el) > 0 {
			return nil
		}
		if h, ok := holds[m.ID]; ok && (h.Reason.Code == engine.WhyWaitingAgent || h.Reason.Code == engine.WhyUnavailable) {
			r := h.Reason
			return &r
		}
		r := st.unavailable(m, holds)
		return &r
	}
}
