package scheduler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

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
// eligible profile with a free slot, records why each other one is held back (a hold per
// mission, written only when a reason changes, with an info log line), and records a wave
// when its decisions differ from the last one.
func (s *Scheduler) planAndDispatch(ctx context.Context, rep *TickReport) error {
	cands, err := s.eng.RunnableOrder(ctx, s.cfg.WaveSize)
	if err != nil {
		return err
	}
	if len(cands) == 0 {
		return s.recordHolds(ctx, nil)
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
	var holds []engine.Hold
	held := func(m *engine.Mission, r engine.Reason) {
		wave.Held = append(wave.Held, engine.WaveEntry{MissionID: m.ID, Reason: r.Message})
		holds = append(holds, engine.Hold{MissionID: m.ID, Reason: r})
	}
	var errs []error
	for _, m := range cands {
		if rs := why[m.ID]; len(rs) > 0 {
			held(&m, rs[0])
			continue
		}
		wave.Runnable++
		a, reason, err := s.choose(ctx, pc, &m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if reason != nil {
			held(&m, *reason)
			errs = append(errs, s.afterHold(ctx, pc, &m, *reason, leased))
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
	errs = append(errs, s.recordHolds(ctx, holds))
	return joinErr(errs, s.recordWave(ctx, wave))
}

// afterHold acts on a planner hold: an urgent mission waiting for a slot may preempt, and a
// mission without a voyage that no agent took within the grace period is escalated (a
// voyage's missions are reported by the voyage's settlement instead).
func (s *Scheduler) afterHold(ctx context.Context, pc *planContext, m *engine.Mission, r engine.Reason, leased []engine.Mission) error {
	switch r.Code {
	case engine.WhySlots, engine.WhyResources:
		s.maybePreempt(ctx, pc, m, leased)
	case engine.WhyUnavailable:
		if m.VoyageID != "" || pc.holds[m.ID].Reason.Code == engine.WhyUnavailable {
			return nil // the voyage reports it, or it was escalated when the hold began
		}
		_, _, err := s.eng.EscalateOnce(ctx, engine.EscalationSpec{MissionIDs: []string{m.ID}, Route: engine.RouteMainAgent,
			Kind: engine.KindNoAgent, Reason: fmt.Sprintf("mission %s (%s): %s", m.ID, m.Title, r.Message),
			DecisionRequired: "configure an agent profile that offers what it needs, start an agent that claims it, change its persona or capabilities (update_mission), or cancel it",
			SafeNextStep:     "get_mission " + m.ID + " shows what it needs; cancel_mission stops it"}, "scheduler")
		return err
	}
	return nil
}

// recordHolds stores the planning step's holds when they differ from the last ones this
// leader stored, and logs each mission whose reason changed (info) or that is no longer held
// (debug).
func (s *Scheduler) recordHolds(ctx context.Context, holds []engine.Hold) error {
	h := sha256.New()
	for _, x := range holds {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d;", x.MissionID, x.Reason.Code, x.Reason.Message, x.Reason.MissionID, x.Reason.Until.UnixMilli())
	}
	sig := hex.EncodeToString(h.Sum(nil))
	s.mu.Lock()
	same := sig == s.lastHolds
	s.mu.Unlock()
	if same {
		return nil
	}
	changes, err := s.eng.RecordHolds(ctx, holds)
	if err != nil {
		return fmt.Errorf("record holds: %w", err)
	}
	s.mu.Lock()
	s.lastHolds = sig
	s.mu.Unlock()
	for _, c := range changes {
		if c.To.Code == "" {
			s.log.Debug("mission no longer held", "mission_id", c.MissionID, "was", c.From.Code)
			continue
		}
		s.log.Info("mission held", "mission_id", c.MissionID, "reason_code", c.To.Code, "reason", c.To.Message, "was", c.From.Code)
	}
	return nil
}

// joinErr joins the errors of one planning step (nils dropped) with err, naming how many
// there were and the first.
func joinErr(errs []error, err error) error {
	errs = slices.DeleteFunc(append(errs, err), func(e error) bool { return e == nil })
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
	load inFlight
	// cap is how many of our agents may run at once (the resource gate, ResourceCap); capWhy
	// says why it is below the configured concurrency.
	cap       int
	capWhy    string
	holds     map[string]engine.Hold // the holds recorded by the last planning step
	outcomes  map[string][2]int      // profile/persona → total, completed
	external  []engine.Agent
	voyages   map[string]engine.Voyage
	preempted bool
}

func (s *Scheduler) newPlanContext(ctx context.Context, leased []engine.Mission) (*planContext, error) {
	pc := &planContext{load: s.currentLoad(leased), outcomes: map[string][2]int{}, voyages: map[string]engine.Voyage{}}
	pc.cap, pc.capWhy, _ = ResourceCap(ReadResources(s.cfg.Resources, s.cfg.DataDir, pc.load.global), s.cfg.MaxConcurrency)
	var err error
	if pc.holds, err = s.eng.Holds(ctx); err != nil {
		return nil, err
	}
	outs, err := s.eng.Outcomes(ctx)
	if err != nil {
		return nil, err
	}
	for _, o := range outs {
		pc.outcomes[o.Profile+"/"+o.Persona] = [2]int{o.Total, o.Completed}
	}
	cutoff := s.eng.Now().Add(-s.cfg.ExternalAgentTTL)
	agents, err := s.eng.AgentsSeenSince(ctx, cutoff)
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		if a.Kind == "external" && a.LastSeen.After(cutoff) {
			pc.external = append(pc.external, a)
		}
	}
	return pc, nil
}

// choose picks the profile for a runnable mission, or says why it waits: its voyage or cost
// limit, no profile offering what it needs, the resource gate, then the concurrency limits.
func (s *Scheduler) choose(ctx context.Context, pc *planContext, m *engine.Mission) (assignment, *engine.Reason, error) {
	if r, err := s.voyageHold(ctx, pc, m); r != nil || err != nil {
		return assignment{}, r, err
	}
	eligible, models := s.eligible(pc, m)
	if len(eligible) == 0 {
		r := s.unavailable(pc, m)
		return assignment{}, &r, nil
	}
	if r := s.slotReason(pc, m); r != nil {
		return assignment{}, r, nil
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
		return assignment{}, &engine.Reason{Code: engine.WhySlots, Message: "concurrency limit of profile " + strings.Join(full, ", ") + " reached"}, nil
	}
	p, _ := s.cfg.profile(best.Profile)
	return assignment{mission: *m, profile: p, model: models[p.Name], score: best, scores: all}, nil, nil
}

// slotReason applies the resource gate and the global and per-repository limits.
func (s *Scheduler) slotReason(pc *planContext, m *engine.Mission) *engine.Reason {
	switch {
	case pc.load.global >= pc.cap && pc.capWhy != "":
		return &engine.Reason{Code: engine.WhyResources, Message: fmt.Sprintf("%s: at most %d of our agents run at once until it passes (%d running; doctor shows the readings)",
			pc.capWhy, pc.cap, pc.load.global)}
	case pc.load.global >= s.cfg.MaxConcurrency:
		return &engine.Reason{Code: engine.WhySlots, Message: fmt.Sprintf("global concurrency limit reached (%d running, max_concurrency %d)", pc.load.global, s.cfg.MaxConcurrency)}
	case pc.load.byRepo[m.Repository] >= s.cfg.PerRepository:
		return &engine.Reason{Code: engine.WhySlots, Message: fmt.Sprintf("repository concurrency limit reached (%d running in %s, per_repository %d)",
			pc.load.byRepo[m.Repository], m.Repository, s.cfg.PerRepository)}
	}
	return nil
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

// unavailable says why no profile can take m: it waits for an agent to claim it (pull mode)
// for the grace period since it began to wait (Config.UnclaimedGrace), then needs a decision
// (code no_agent). Never a deadlock: an agent may connect at any time.
func (s *Scheduler) unavailable(pc *planContext, m *engine.Mission) engine.Reason {
	need := needs(m)
	what := "no agent profile offers " + need
	if need == "" {
		what = "no agent profile is configured"
	}
	for _, a := range pc.external {
		if engine.Eligible(m, engine.Candidate{Name: a.ID, Capabilities: a.Capabilities, Personas: a.Personas}) {
			what += "; external agent " + a.ID + " can take it"
			break
		}
	}
	now := s.eng.Now()
	since := now
	switch prev := pc.holds[m.ID].Reason; prev.Code {
	case engine.WhyUnavailable:
		return prev
	case engine.WhyWaitingAgent:
		since = prev.Since
	}
	grace := s.cfg.UnclaimedGrace
	if now.Sub(since) >= grace {
		if need == "" {
			need = "to claim it"
		}
		return engine.Reason{Code: engine.WhyUnavailable, Message: fmt.Sprintf("no agent offers %s: none claimed it within %s (unclaimed_grace); %s", need, grace, what)}
	}
	return engine.Reason{Code: engine.WhyWaitingAgent, Since: since, Message: fmt.Sprintf("waiting for an agent to claim it (claim_mission): %s; escalated as no_agent if none has by %s",
		what, since.Add(grace).UTC().Format(time.RFC3339))}
}

// needs says what m asks of an agent beyond the defaults ("" when nothing).
func needs(m *engine.Mission) string {
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
	return strings.Join(need, " and ")
}

// agentCheck tells SettleVoyage whether some agent could take a runnable mission: nil when a
// profile can, else the same reason the planner records (waiting for an agent within the
// grace period, which is transient; no_agent after it).
func (s *Scheduler) agentCheck(ctx context.Context) (engine.AgentCheck, error) {
	pc, err := s.newPlanContext(ctx, nil)
	if err != nil {
		return nil, err
	}
	return func(m *engine.Mission) *engine.Reason {
		if el, _ := s.eligible(pc, m); len(el) > 0 {
			return nil
		}
		// The planner's decision of this tick, when it made one: settling a moment later must
		// not see the grace period end before the planner does (the two would disagree).
		if h, ok := pc.holds[m.ID]; ok && (h.Reason.Code == engine.WhyWaitingAgent || h.Reason.Code == engine.WhyUnavailable) {
			r := h.Reason
			return &r
		}
		r := s.unavailable(pc, m)
		return &r
	}, nil
}
