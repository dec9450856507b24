package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Group is the limit group whose usage window p shares: its LimitGroup, else its own name.
func (p Profile) Group() string {
	if p.LimitGroup != "" {
		return p.LimitGroup
	}
	return p.Name
}

// window returns the group window of profile p that holds now (ok false: none, or it ended).
func (st *state) window(p Profile) (engine.RateWindow, bool) {
	w, ok := st.s.RateWindows[p.Group()]
	return w, ok && w.Active(st.now)
}

// unpaused drops the candidates whose group's window is paused; when none is left it says
// why m waits: every eligible profile's "profile P rate-limited until T", the earliest
// reset's Until on the reason (the mission resumes then).
func (st *state) unpaused(eligible []Candidate) ([]Candidate, *engine.Reason) {
	var out []Candidate
	var held []engine.Reason
	for _, c := range eligible {
		p, _ := profileNamed(st.profiles, c.Name)
		if w, ok := st.window(p); ok && w.Status == engine.RatePaused {
			held = append(held, engine.RateLimitedReason(p.Name, w))
			continue
		}
		out = append(out, c)
	}
	if len(out) > 0 || len(held) == 0 {
		return out, nil
	}
	r := held[0]
	msgs := []string{r.Message}
	for _, h := range held[1:] {
		msgs = append(msgs, h.Message)
		if h.Until.Before(r.Until) {
			r.Until = h.Until
		}
	}
	r.Message = strings.Join(msgs, "; ")
	return nil, &r
}

// profileCap is how many attempts profile p may run now: its MaxConcurrency, halved (rounded
// down, at least 1) while its group's window warns that it is nearly used up; why says so.
func (st *state) profileCap(p Profile) (cap int, why string) {
	if w, ok := st.window(p); ok && w.Status == engine.RateWarning {
		return max(1, p.MaxConcurrency/2), fmt.Sprintf(", halved until %s: its rate-limit window is nearly used up", stamp(w.Until))
	}
	return p.MaxConcurrency, ""
}

// deadlineInWindow plans the escalation of a mission whose deadline falls before its
// profile's window resets: waiting would miss it, so a person or the Main Agent decides
// (another profile, a later deadline, or cancel). EscalateOnce keeps it to one.
func (st *state) deadlineInWindow(p *Plan, m *domain.Mission, r engine.Reason) {
	if m.Deadline.IsZero() || !m.Deadline.Before(r.Until) || st.escalated[m.ID] {
		return
	}
	st.escalated[m.ID] = true
	p.Escalate = append(p.Escalate, engine.EscalationSpec{MissionIDs: []string{m.ID}, VoyageID: m.VoyageID,
		Route: domain.RouteMainAgent, Kind: KindRateLimitDeadline,
		Reason:           fmt.Sprintf("mission %s (%s) has deadline %s, inside its rate-limit window: %s", m.ID, m.Title, stamp(m.Deadline), r.Message),
		DecisionRequired: "let it wait past its deadline (update_mission deadline), give it a profile that is not rate-limited (capabilities, persona), or cancel it",
		SafeNextStep:     "get_mission " + m.ID + " shows the wait; it starts by itself when the window resets"})
}

// KindRateLimitDeadline is the escalation kind of a mission whose deadline falls inside its
// profile's rate-limit window.
const KindRateLimitDeadline = "rate_limit_deadline"

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
