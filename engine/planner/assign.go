package planner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// eligible returns the profiles that may run m, as scoring candidates, and the model each
// would run (hard filters: capabilities, personas, a forced model the profile offers); avoid
// is the model a reviewer should not run when its profile offers another.
func (st *state) eligible(m *domain.Mission, avoid string) ([]Candidate, map[string]string) {
	var out []Candidate
	models := map[string]string{}
	for _, p := range st.profiles {
		c := Candidate{Name: p.Name, Capabilities: p.Capabilities, Personas: p.Personas,
			PreferredPersona: p.PreferredPersona, Confidence: Confidence(p, st.outcomes[p.Name+"/"+m.Persona])}
		if !Eligible(m, c) {
			continue
		}
		model, ok := ChooseModel(m, p, avoid)
		if !ok {
			continue
		}
		c.Load = float64(st.load.byProfile[p.Name]) / float64(max(p.MaxConcurrency, 1))
		out = append(out, c)
		models[p.Name] = model
	}
	return out, models
}

// Confidence is the observed success rate of profile p for a persona, history being its
// attempts (total, completed), smoothed towards the declared prior with a weight of two
// attempts (no history: the prior itself).
func Confidence(p Profile, history [2]int) float64 {
	const weight = 2.0
	return (float64(history[1]) + p.Confidence*weight) / (float64(history[0]) + weight)
}

// ChooseModel applies the mission's model policy to a profile: scheduler_forced runs exactly
// its model (the profile must offer it when it lists models); agent_select lets the agent
// pick within the allowed list (the profile's first allowed model is suggested). A reviewer
// avoids the model its subject ran (avoid) when the profile offers another. ok is false when
// the profile cannot satisfy the policy; the model is "" when the runtime chooses.
func ChooseModel(m *domain.Mission, p Profile, avoid string) (string, bool) {
	pol := m.ModelPolicy
	if pol.Mode == domain.ModeSchedulerForced {
		return pol.Model, len(p.Models) == 0 || slices.Contains(p.Models, pol.Model)
	}
	models := p.Models
	if pol.Mode == domain.ModeAgentSelect && len(pol.Allowed) > 0 {
		models = slices.DeleteFunc(slices.Clone(p.Models), func(x string) bool { return !slices.Contains(pol.Allowed, x) })
		if len(p.Models) > 0 && len(models) == 0 {
			return "", false
		}
		if len(p.Models) == 0 {
			models = pol.Allowed
		}
	}
	for _, x := range models {
		if x != avoid {
			return x, true
		}
	}
	if len(models) > 0 {
		return models[0], true
	}
	return "", true
}

// unavailable says why no profile can take m, given the holds of the last planning step:
// it waits for an agent to claim it (pull mode) for the grace period since it began to wait
// (Limits.UnclaimedGrace), then needs a decision (code no_agent). Never a deadlock: an agent
// may connect at any time.
func (st *state) unavailable(m *domain.Mission, holds map[string]engine.Hold) engine.Reason {
	need := needs(m)
	what := "no agent profile offers " + need
	if need == "" {
		what = "no agent profile is configured"
	}
	for _, a := range st.external {
		if Eligible(m, Candidate{Name: a.ID, Capabilities: a.Capabilities, Personas: a.Personas}) {
			what += "; external agent " + a.ID + " can take it"
			break
		}
	}
	since := st.now
	switch prev := holds[m.ID].Reason; prev.Code {
	case engine.WhyUnavailable:
		return prev
	case engine.WhyWaitingAgent:
		since = prev.Since
	}
	grace := st.lim.UnclaimedGrace
	if st.now.Sub(since) >= grace {
		if need == "" {
			need = "to claim it"
		}
		return engine.Reason{Code: engine.WhyUnavailable, Message: fmt.Sprintf("no agent offers %s: none claimed it within %s (unclaimed_grace); %s", need, grace, what)}
	}
	return engine.Reason{Code: engine.WhyWaitingAgent, Since: since, Message: fmt.Sprintf("waiting for an agent to claim it (claim_mission): %s; escalated as no_agent if none has by %s",
		what, since.Add(grace).UTC().Format(time.RFC3339))}
}

// needs says what m asks of an agent beyond the defaults ("" when nothing).
func needs(m *domain.Mission) string {
	var need []string
	if m.Persona != "" {
		need = append(need, "persona "+m.Persona)
	}
	if len(m.Capabilities) > 0 {
		need = append(need, "capabilities "+strings.Join(m.Capabilities, ", "))
	}
	if m.ModelPolicy.Mode == domain.ModeSchedulerForced {
		need = append(need, "model "+m.ModelPolicy.Model)
	}
	return strings.Join(need, " and ")
}
