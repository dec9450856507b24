package scheduler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// tickPlan is one planning step's snapshot and plan. The voyage settlement of the same tick
// decides with it (planner.AgentCheck) instead of reading the planning state again.
type tickPlan struct {
	snap planner.Snapshot
	plan planner.Plan
	now  time.Time
}

// planAndDispatch is the planning step: read the snapshot (one read transaction, then the
// host's readings), compute the plan (pure), apply it (all of it when cluster, the
// cluster-wide duties being this process's; else only this node's dispatches and
// preemptions). It returns the plan for the tick's settlement (nil when the snapshot could
// not be read).
func (s *Scheduler) planAndDispatch(ctx context.Context, rep *TickReport, cluster bool) (*tickPlan, error) {
	tp, err := s.computePlan(ctx)
	if err != nil {
		return nil, err
	}
	s.wakeAtRateResets(tp) // ratelimit.go
	return tp, s.apply(ctx, tp, rep, cluster)
}

// computePlan reads the snapshot and computes its plan, changing nothing.
func (s *Scheduler) computePlan(ctx context.Context) (*tickPlan, error) {
	profiles := s.plannerProfiles()
	snap, now, err := s.snapshot(ctx, profiles)
	if err != nil {
		return nil, fmt.Errorf("planning snapshot: %w", err)
	}
	return &tickPlan{snap: snap, now: now, plan: planner.Compute(snap, now, s.limits(), profiles)}, nil
}

// snapshot reads what the planner decides on: the store's part in one read transaction
// (engine.PlanningView, the landing queue included), what this process supervises (which
// running missions can yield, which targets its landing workers are on; in cluster mode the
// landing locks other nodes hold), and the host's
// resource readings when there is a candidate to gate.
func (s *Scheduler) snapshot(ctx context.Context, profiles []planner.Profile) (planner.Snapshot, time.Time, error) {
	now := s.eng.Now()
	v, err := s.eng.PlanningView(ctx, s.cfg.WaveSize, now.Add(-s.cfg.ExternalAgentTTL))
	if err != nil {
		return planner.Snapshot{}, now, err
	}
	snap := planner.Snapshot{Missions: v.Candidates, Edges: v.Edges, Paused: v.Paused, Running: v.Live,
		Voyages: v.Voyages, Holds: v.Holds, Outcomes: v.Outcomes, Agents: v.Agents,
		SubjectModels: map[string]string{}, Yieldable: map[string]bool{}, Landing: s.land.snapshot(v.Landing),
		RateWindows: v.RateWindows, TokenLimits: v.TokenLimits, Node: s.cfg.Node}
	if snap.Landing.Locks, err = s.land.otherLocks(ctx, v.Landing); err != nil {
		return planner.Snapshot{}, now, fmt.Errorf("landing locks: %w", err)
	}
	for _, m := range v.Candidates {
		if u, ok := v.Subjects[m.SubjectID]; ok && m.Kind == domain.KindReview {
			snap.SubjectModels[m.ID] = runOf(&u).Model
		}
	}
	if len(v.Candidates) == 0 {
		return snap, now, nil
	}
	if snap.ProfileHolds, err = s.eng.ProfileDayHolds(ctx); err != nil {
		return planner.Snapshot{}, now, err
	}
	if s.anyUrgent(v.Candidates) {
		for i := range v.Live {
			snap.Yieldable[v.Live[i].ID] = s.yieldable(&v.Live[i])
		}
	}
	snap.Readings = ReadResources(s.cfg.Resources, s.cfg.DataDir, planner.InFlight(v.Live, profiles, s.cfg.Node))
	return snap, now, nil
}

// anyUrgent reports whether a candidate is urgent enough to preempt (only then does the
// snapshot ask which running missions can yield).
func (s *Scheduler) anyUrgent(ms []domain.Mission) bool {
	return slices.ContainsFunc(ms, func(m domain.Mission) bool { return m.Priority <= s.cfg.UrgentPriority })
}

// plannerProfiles is the configured profiles as the planner sees them.
func (s *Scheduler) plannerProfiles() []planner.Profile {
	out := make([]planner.Profile, len(s.cfg.Profiles))
	for i, p := range s.cfg.Profiles {
		out[i] = plannerProfile(p)
	}
	return out
}

func plannerProfile(p agent.Profile) planner.Profile {
	return planner.Profile{Name: p.Name, Capabilities: p.Capabilities, Personas: p.Personas, PreferredPersona: p.PreferredPersona,
		Confidence: p.Confidence, Models: p.Models, MaxConcurrency: p.MaxConcurrency, LimitGroup: p.LimitGroup}
}

// limits is the configuration's limits as the planner applies them.
func (s *Scheduler) limits() planner.Limits {
	return planner.Limits{MaxConcurrency: s.cfg.MaxConcurrency, PerRepository: s.cfg.PerRepository, UrgentPriority: s.cfg.UrgentPriority,
		UnclaimedGrace: s.cfg.UnclaimedGrace, ExternalAgentTTL: s.cfg.ExternalAgentTTL}
}

// apply carries out a plan: the landing moves (handed to the landing service's workers),
// preemptions, no_agent escalations (EscalateOnce), dispatches in pick order, then the holds
// with the landing waits (RecordHolds, when they changed) and the wave (when it differs from
// the last). Without cluster (a cluster node that does not lead) only this node's landings,
// preemptions and dispatches are applied. A dispatch the targeted acquire refuses (taken or changed since the snapshot) is
// logged and left to the next planning step. Every error is returned, joined.
func (s *Scheduler) apply(ctx context.Context, tp *tickPlan, rep *TickReport, cluster bool) error {
	p := &tp.plan
	groups := p.Land
	if s.node != nil {
		groups = s.nodeLandings(ctx, p.Land, cluster)
	}
	s.land.apply(groups)
	if cluster && len(tp.snap.Missions) == 0 {
		return s.recordHolds(ctx, p.LandWait)
	}
	for _, pr := range p.Preempt {
		s.preempt(ctx, pr) // only this process's agents can yield (Snapshot.Yieldable)
	}
	var errs []error
	if cluster {
		for _, spec := range p.Escalate {
			if _, _, err := s.eng.EscalateOnce(ctx, spec, "scheduler"); err != nil {
				errs = append(errs, fmt.Errorf("escalate no_agent for %s: %w", spec.MissionIDs[0], err))
			}
		}
	}
	wave := domain.Wave{Runnable: p.Runnable}
	for _, d := range p.Dispatch {
		e, err := s.applyDispatch(ctx, d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if e != nil {
			wave.Dispatched = append(wave.Dispatched, *e)
			rep.Dispatched = append(rep.Dispatched, d.Mission.ID)
		}
	}
	rep.Held = len(p.Held)
	if !cluster { // a cluster node that does not lead: the leader records holds and the wave
		return joinErr(errs, nil)
	}
	for _, h := range p.Held {
		wave.Held = append(wave.Held, domain.WaveEntry{MissionID: h.MissionID, Reason: h.Reason.Message})
	}
	errs = append(errs, s.recordHolds(ctx, append(slices.Clone(p.Held), p.LandWait...)))
	return joinErr(errs, s.recordWave(ctx, wave))
}

// applyDispatch dispatches one planned assignment; it returns the wave entry when the
// mission was taken (nil when the acquire refused it, which is logged).
func (s *Scheduler) applyDispatch(ctx context.Context, d planner.Dispatch) (*domain.WaveEntry, error) {
	prof, ok := s.cfg.profile(d.Profile)
	if !ok {
		return nil, fmt.Errorf("dispatch %s: the plan names profile %q, which is not configured", d.Mission.ID, d.Profile)
	}
	s.setPhase(PhaseDispatch)
	taken, err := s.dispatch(ctx, assignment{mission: d.Mission, profile: prof, model: d.Model, score: d.Score, scores: d.Scores})
	if err != nil {
		return nil, fmt.Errorf("dispatch %s: %w", d.Mission.ID, err)
	}
	if !taken {
		s.log.Debug("not dispatched: taken, changed or leadership lost since the planning snapshot; the next planning step decides again",
			"mission_id", d.Mission.ID, "profile", d.Profile)
		return nil, nil
	}
	score := d.Score
	return &domain.WaveEntry{MissionID: d.Mission.ID, Profile: d.Profile, Score: &score}, nil
}

// preempt records a planned preemption and tells the agent; a preemption that cannot be
// recorded (the mission finished or moved since the snapshot) is logged with its reason and
// planned again on the next step if still called for.
func (s *Scheduler) preempt(ctx context.Context, pr planner.Preemption) {
	if err := s.eng.Preempt(ctx, pr.MissionID, pr.Reason, "scheduler"); err != nil {
		s.log.Warn("preemption not recorded", "mission_id", pr.MissionID, "for", pr.For, "err", err)
		return
	}
	s.askYield(pr.MissionID)
}

// recordHolds stores the planning step's holds when they differ from the last ones this
// leader stored, and logs each mission whose reason changed (info) or that is no longer held
// (debug).
func (s *Scheduler) recordHolds(ctx context.Context, holds []engine.Hold) error {
	h := sha256.New() // a hash.Hash never returns a write error: Fprintf's is nil
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
func (s *Scheduler) recordWave(ctx context.Context, w domain.Wave) error {
	h := sha256.New() // a hash.Hash never returns a write error: Fprintf's is nil
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

// agentCheck tells SettleVoyage whether some agent could take a runnable mission, from the
// tick's plan (planner.AgentCheck); without one (the planning snapshot failed) it computes a
// plan of its own, applying nothing.
func (s *Scheduler) agentCheck(ctx context.Context, tp *tickPlan) (engine.AgentCheck, error) {
	if tp == nil {
		var err error
		if tp, err = s.computePlan(ctx); err != nil {
			return nil, err
		}
	}
	return planner.AgentCheck(tp.snap, tp.plan, tp.now, s.limits(), s.plannerProfiles()), nil
}
