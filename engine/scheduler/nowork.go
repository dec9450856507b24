package scheduler

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// noWorkScan bounds how many waiting missions a claim that found nothing looks at to say why,
// and noWorkExplain how many of those it asks the engine about (one read each).
const (
	noWorkScan    = 500
	noWorkExplain = 20
)

// NoWorkError is Claim's domain.ErrNoWork (errors.Is holds) with why nothing was handed to
// this claimer: how many missions wait, how many of them ask for what the claimer does not
// offer (personas, capabilities: planner.Eligible, the rule the pick applies), how many are
// in another repository than the one it asked for, and what the others wait for (the
// engine's reason codes, as get_mission gives them).
type NoWorkError struct{ Why string }

func (e *NoWorkError) Error() string {
	return "no runnable mission fits you now: " + e.Why + "; call again later or pass wait_seconds"
}

// Unwrap makes errors.Is(err, domain.ErrNoWork) true.
func (e *NoWorkError) Unwrap() error { return domain.ErrNoWork }

// whyNoWork explains an empty claim for req. A read error leaves the explanation out (the
// claim's answer stays "no work"); it is logged.
func (p *PullService) whyNoWork(ctx context.Context, req engine.ClaimRequest) error {
	waiting, err := p.s.eng.ListMissions(ctx, engine.MissionFilter{
		States: []domain.MissionState{domain.StatePending, domain.StateInterrupted}, Limit: noWorkScan})
	if err != nil {
		p.s.log.Warn("claim found no work; could not say why", "agent", req.AgentID, "err", err)
		return domain.ErrNoWork
	}
	return &NoWorkError{Why: p.noWorkWhy(ctx, req, waiting)}
}

func (p *PullService) noWorkWhy(ctx context.Context, req engine.ClaimRequest, waiting []domain.Mission) string {
	if len(waiting) == 0 {
		return "no mission is pending or interrupted"
	}
	me := planner.Candidate{Name: req.AgentID, Capabilities: req.Capabilities, Personas: req.Personas}
	unfit, waits := map[string]int{}, map[string]int{}
	elsewhere, asked := 0, 0
	for i := range waiting {
		m := &waiting[i]
		switch {
		case req.Repository != "" && m.Repository != req.Repository:
			elsewhere++
		case !planner.Eligible(m, me):
			unfit[unoffered(m, me)]++
		case asked < noWorkExplain:
			asked++
			waits[p.waitCode(ctx, m.ID)]++
		default:
			waits["not looked at"]++
		}
	}
	of := fmt.Sprintf("%d", len(waiting))
	if len(waiting) == noWorkScan {
		of = fmt.Sprintf("the first %d", noWorkScan)
	}
	parts := []string{}
	if n := sum(unfit); n > 0 {
		parts = append(parts, fmt.Sprintf("%d ask for what you do not offer (%s)", n, tally(unfit)))
	}
	if elsewhere > 0 {
		parts = append(parts, fmt.Sprintf("%d are in another repository than %s", elsewhere, req.Repository))
	}
	if n := sum(waits); n > 0 {
		parts = append(parts, fmt.Sprintf("%d wait (%s; get_mission says why)", n, tally(waits)))
	}
	return "of " + of + " waiting missions, " + strings.Join(parts, ", ")
}

// waitCode is the first reason get_mission gives for mission id not running (its
// why_not_running: the runnable rules, then a spent budget), or "runnable now: claim again"
// when it gives none of those (it became runnable after the claim looked).
func (p *PullService) waitCode(ctx context.Context, id string) string {
	d, err := p.s.eng.GetMission(ctx, id)
	switch {
	case err != nil:
		return "unknown"
	case len(d.WhyNotRunning) == 0, d.WhyNotRunning[0].Code == engine.WhyQueued, d.WhyNotRunning[0].Code == engine.WhyNoLeader:
		return "runnable now: claim again"
	}
	return d.WhyNotRunning[0].Code
}

// unoffered names what m asks of an agent that c does not offer.
func unoffered(m *domain.Mission, c planner.Candidate) string {
	var out []string
	if m.Persona != "" && len(c.Personas) > 0 && !slices.Contains(c.Personas, m.Persona) {
		out = append(out, "persona "+m.Persona)
	}
	for _, need := range m.Capabilities {
		if !slices.Contains(c.Capabilities, need) {
			out = append(out, "capability "+need)
		}
	}
	return strings.Join(out, " and ")
}

// tally writes counts as "a ×2, b ×1", most frequent first, then by name.
func tally(counts map[string]int) string {
	keys := slices.Collect(maps.Keys(counts))
	slices.SortFunc(keys, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s ×%d", k, counts[k])
	}
	return strings.Join(out, ", ")
}

func sum(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
