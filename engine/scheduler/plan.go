package scheduler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// inFlight is what is in flight, for concurrency limits and scores.
type inFlight struct {
	global    int
	byProfile map[string]int
	byRepo    map[string]int
}

func (s *Scheduler) currentLoad(leased []engine.Mission) inFlight {
	l := inFlight{byProfile: map[string]int{}, byRepo: map[string]int{}}
	for _, m := range leased {
		l.byRepo[m.Repository]++
		if _, ok := s.cfg.profile(m.Profile); ok {
			l.global++
			l.byProfile[m.Profile]++
		}
	}
	return l
}

// planAndDispatch looks at the runnable missions in pick order, dispatches those that have an
// eligible profile with a free slot, and records a wave with every held-back mission's
// reason when it differs from the last one.
func (s *Scheduler) planAndDispatch(ctx context.Context, rep *TickReport) error {
	cands, err := s.eng.RunnableOrder(ctx, s.cfg.WaveSize)
	if err != nil || len(cands) == 0 {
		return err
	}
	why, err := s.eng.ExplainMany(ctx, cands)
	if err != nil {
		return err
	}
	leased, err := s.eng.Leased(ctx)
	if err != nil {
		return err
	}
	pc, err := s.newPlanContext(ctx, leased)
	if err != nil {
		return err
	}
	wave := engine.Wave{}
	var errs []error
	for _, m := range cands {
		if rs := why[m.ID]; len(rs) > 0 {
			wave.Held = append(wave.Held, engine.WaveEntry{MissionID: m.ID, Reason: rs[0].Message})
			continue
		}
		wave.Runnable++
		a, reason := s.choose(ctx, pc, &m)
		if reason != "" {
			wave.Held = append(wave.Held, engine.WaveEntry{MissionID: m.ID, Reason: reason})
			s.maybePreempt(ctx, pc, &m, leased)
			continue
		}
		s.setPhase(PhaseDispatch)
		taken, err := s.dispatch(ctx, a)
		if err != nil {
			errs = append(errs, fmt.Errorf("dispatch %s: %w", m.ID, err))
			continue
		}
		if !taken {
			continue
		}
		pc.load.global++
		pc.load.byProfile[a.profile.Name]++
		pc.load.byRepo[m.Repository]++
		score := a.score
		wave.Dispatched = append(wave.Dispatched, engine.WaveEntry{MissionID: m.ID, Profile: a.profile.Name, Score: &score})
		rep.Dispatched = append(rep.Dispatched, m.ID)
	}
	rep.Held = len(wave.Held)
	return joinErr(errs, s.recordWave(ctx, wave))
}

func joinErr(errs []error, err error) error {
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%d error(s), first: %w", len(errs), errs[0])
}

// recordWave stores the wave when its decisions differ from the last recorded one, so an
// idle scheduler does not write a wave every second.
func (s *Scheduler) recordWave(ctx context.Context, w engine.Wave) error {
	h := sha256.New()
	for _, e := range w.Dispatched {
		fmt.Fprintf(h, "d%s%s;", e.MissionID, e.Profile)
	}
	for _, e := range w.Held {
		fmt.Fprintf(h, "h%s%s;", e.MissionID, e.Reason)
	}
	sig := hex.EncodeToString(h.Sum(nil))
	s.mu.Lock()
	same := sig == s.lastWave
	s.lastWave = sig
	s.mu.Unlock()
	if same || (len(w.Dispatched) == 0 && len(w.Held) == 0) {
		return nil
	}
	_, err := s.eng.RecordWave(ctx, w)
	return err
}

// planContext is what one planning step knows besides the missions.
type planContext struct {
	load        inFlight
	resourceLow string
	outcomes    map[string][2]int // profile/persona → total, completed
	external    []engine.Agent
	voyages     map[string]engine.Voyage
	preempted   bool
}

func (s *Scheduler) newPlanContext(ctx context.Context, leased []engine.Mission) (*planContext, error) {
	pc := &planContext{load: s.currentLoad(leased), outcomes: map[string][2]int{}, voyages: map[string]engine.Voyage{}}
	pc.resourceLow = s.resourcesLow()
	outs, err := s.eng.Outcomes(ctx)
	if err != nil {
		return nil, err
	}
	for _, o := range outs {
		pc.outcomes[o.Profile+"/"+o.Persona] = [2]int{o.Total, o.Completed}
	}
	agents, err := s.eng.Agents(ctx)
	if err != nil {
		return nil, err
	}
	cutoff := s.eng.Now().Add(-s.cfg.ExternalAgentTTL)
	for _, a := range agents {
		if a.Kind == "external" && a.LastSeen.After(cutoff) {
			pc.external = append(pc.external, a)
		}
	}
	return pc, nil
}

// choose picks the profile for a runnable mission, or says why it waits.
func (s *Scheduler) choose(ctx context.Context, pc *planContext, m *engine.Mission) (assignment, string) {
	if r := s.voyageHold(ctx, pc, m); r != "" {
		return assignment{}, r
	}
	eligible, models := s.eligible(pc, m)
	if len(eligible) == 0 {
		return assignment{}, s.unavailable(pc, m)
	}
	if pc.resourceLow != "" {
		return assignment{}, "resources low: " + pc.resourceLow
	}
	if pc.load.global >= s.cfg.MaxConcurrency {
		return assignment{}, fmt.Sprintf("global concurrency limit reached (%d running)", pc.load.global)
	}
	if pc.load.byRepo[m.Repository] >= s.cfg.PerRepository {
		return assignment{}, fmt.Sprintf("repository concurrency limit reached (%d running in %s)", pc.load.byRepo[m.Repository], m.Repository)
	}
	var free []engine.Candidate
	var full []string
	for _, c := range eligible {
		p, _ := s.cfg.profile(c.Name)
		if pc.load.byProfile[c.Name] >= p.MaxConcurrency {
			full = append(full, fmt.Sprintf("%s (%d/%d)", c.Name, pc.load.byProfile[c.Name], p.MaxConcurrency))
			continue
		}
		free = append(free, c)
	}
	best, all, ok := engine.Assign(m, free)
	if !ok {
		return assignment{}, "concurrency limit of profile " + strings.Join(full, ", ")
	}
	p, _ := s.cfg.profile(best.Profile)
	return assignment{mission: *m, profile: p, model: models[p.Name], score: best, scores: all}, ""
}

// eligible returns the profiles that may run m, as scoring candidates, and the model each
// would run (hard filters: capabilities, personas, a forced model the profile offers).
func (s *Scheduler) eligible(pc *planContext, m *engine.Mission) ([]engine.Candidate, map[string]string) {
	var out []engine.Candidate
	models := map[string]string{}
	avoid := s.subjectModel(m)
	for _, p := range s.cfg.Profiles {
		c := engine.Candidate{Name: p.Name, Capabilities: p.Capabilities, Personas: p.Personas,
			PreferredPersona: p.PreferredPersona, Confidence: s.confidence(pc, p, m.Persona)}
		if !engine.Eligible(m, c) {
			continue
		}
		model, ok := chooseModel(m, p, avoid)
		if !ok {
			continue
		}
		c.Load = float64(pc.load.byProfile[p.Name]) / float64(max(p.MaxConcurrency, 1))
		out = append(out, c)
		models[p.Name] = model
	}
	return out, models
}

// confidence is the observed success rate of the profile for this persona, smoothed towards
// the declared prior (no history: the prior itself).
func (s *Scheduler) confidence(pc *planContext, p agent.Profile, persona string) float64 {
	h := pc.outcomes[p.Name+"/"+persona]
	const weight = 2.0
	return (float64(h[1]) + p.Confidence*weight) / (float64(h[0]) + weight)
}

// chooseModel applies the mission's model policy to a profile: scheduler_forced runs exactly
// its model (the profile must offer it when it lists models); agent_select lets the agent
// pick within the allowed list (the profile's first allowed model is suggested). A reviewer
// avoids the model its subject ran when the profile offers another.
func chooseModel(m *engine.Mission, p agent.Profile, avoid string) (string, bool) {
	pol := m.ModelPolicy
	if pol.Mode == engine.ModeSchedulerForced {
		return pol.Model, len(p.Models) == 0 || slices.Contains(p.Models, pol.Model)
	}
	models := p.Models
	if pol.Mode == engine.ModeAgentSelect && len(pol.Allowed) > 0 {
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

// subjectModel is the model the reviewed mission ran (a reviewer should differ).
func (s *Scheduler) subjectModel(m *engine.Mission) string {
	if m.Kind != engine.KindReview || m.SubjectID == "" {
		return ""
	}
	d, err := s.eng.GetMission(context.Background(), m.SubjectID)
	if err != nil {
		return ""
	}
	return runOf(&d.Mission).Model
}

// unavailable explains why no profile can take m, and whether an external agent could.
func (s *Scheduler) unavailable(pc *planContext, m *engine.Mission) string {
	for _, a := range pc.external {
		c := engine.Candidate{Name: a.ID, Capabilities: a.Capabilities, Personas: a.Personas}
		if engine.Eligible(m, c) {
			return "waiting for an external agent to claim it (" + a.ID + " can)"
		}
	}
	var need []string
	if m.Persona != "" {
		need = append(need, "persona "+m.Persona)
	}
	if len(m.Capabilities) > 0 {
		need = append(need, "capabilities "+strings.Join(m.Capabilities, ", "))
	}
	if m.ModelPolicy.Mode == engine.ModeSchedulerForced {
		need = append(need, "model "+m.ModelPolicy.Model)
	}
	if len(need) == 0 {
		return "no agent profile is configured and no external agent claims work"
	}
	return "no agent profile offers " + strings.Join(need, " and ")
}

// AgentCheck tells SettleVoyage whether some agent could take a runnable mission.
func (s *Scheduler) agentCheck(ctx context.Context) engine.AgentCheck {
	pc, err := s.newPlanContext(ctx, nil)
	if err != nil {
		return nil
	}
	return func(m *engine.Mission) *engine.Reason {
		if el, _ := s.eligible(pc, m); len(el) > 0 {
			return nil
		}
		msg := s.unavailable(pc, m)
		if strings.HasPrefix(msg, "waiting for an external agent") {
			return nil
		}
		return &engine.Reason{Code: engine.WhyUnavailable, Message: msg}
	}
}
