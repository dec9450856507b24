package planner

import (
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// blockedHold is the hold of a candidate the runnable rule blocks with rs (first reason
// first). A mission that was held for a spent budget or a rate-limited profile keeps that hold
// while the blocker is one that passes by itself (another mission running alone in the
// repository, a conflict, a pause) and the budget or the window still holds it: once the
// blocker passes the mission would wait for the same budget or window again, so the wait it
// says — and the one mission.held event, the one notification of that wait — stays the
// budget's or the window's instead of flipping to the blocker and back.
func (st *state) blockedHold(m *domain.Mission, rs []engine.Reason) engine.Reason {
	if !rs[0].Transient() {
		return rs[0]
	}
	switch st.holds[m.ID].Reason.Code {
	case engine.WhyBudget:
		if r := st.budgetHold(m); r != nil {
			return *r
		}
	case engine.WhyRateLimited:
		if r := st.rateHold(m); r != nil {
			return *r
		}
	}
	return rs[0]
}

// budgetHold is the budget that holds m back before any profile is chosen: its voyage's or
// its own limit, else the daily cap of every profile that could take it (nil: none).
func (st *state) budgetHold(m *domain.Mission) *engine.Reason {
	var v *domain.Voyage
	if vo, ok := st.s.Voyages[m.VoyageID]; ok && m.VoyageID != "" {
		v = &vo
	}
	if r := engine.VoyageHold(v, m, st.s.TokenLimits[m.ID]); r != nil {
		return r
	}
	eligible, _ := st.eligible(m, st.s.SubjectModels[m.ID])
	var held *engine.Reason
	for _, c := range eligible {
		r, ok := st.s.ProfileHolds[c.Name]
		if !ok {
			return nil
		}
		if held == nil {
			held = &r
		}
	}
	return held
}

// rateHold is the rate-limit pause of every profile that could take m (nil: one is free).
func (st *state) rateHold(m *domain.Mission) *engine.Reason {
	eligible, _ := st.eligible(m, st.s.SubjectModels[m.ID])
	_, r := st.unpaused(eligible)
	return r
}
