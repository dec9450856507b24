package scheduler

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// rateLimit records a task.rate_limit of a supervised agent for its profile's limit group
// (engine.RecordRateLimit decides the pause), logs a change, and wakes the tick when the
// group has room again. A body with an unknown status is logged and dropped.
func (sv *supervisor) rateLimit(ctx context.Context, a *attemptRun, rl *agent.RateLimit) error {
	return sv.rateSignal(ctx, a, rl, time.Time{})
}

// rateSignal is rateLimit with, for an allowed inferred from a completed attempt, the time
// that attempt began (zero: the agent reported the window itself).
func (sv *supervisor) rateSignal(ctx context.Context, a *attemptRun, rl *agent.RateLimit, completedStarted time.Time) error {
	if rl == nil || !agent.KnownRateStatus(rl.Status) {
		sv.log.Warn("task.rate_limit ignored: rate_limit.status must be allowed, allowed_warning or rejected",
			"mission_id", a.fence.MissionID, "profile", a.profile.Name)
		return nil
	}
	if rl.Status == agent.RateRejected {
		a.rateLimited.Store(true)
	}
	sig := engine.RateSignal{Group: a.profile.RateGroup(), Profile: a.profile.Name, MissionID: a.fence.MissionID, Limit: *rl,
		CompletedStarted: completedStarted}
	w, changed, err := sv.eng.RecordRateLimit(ctx, sig, sv.cfg.RateLimit)
	if err != nil || !changed {
		return err
	}
	switch w.Status {
	case "":
		sv.log.Info("rate-limit window has room again", "group", sig.Group, "profile", sig.Profile, "mission_id", sig.MissionID)
		sv.host.wake()
	case engine.RatePaused:
		sv.log.Warn("profile rate-limited: its missions wait", "group", w.Group, "profile", w.Profile, "until", w.Until,
			"mission_id", w.MissionID, "why", w.Why)
	default:
		sv.log.Warn("rate-limit window nearly used up: the group's profiles run at half concurrency", "group", w.Group,
			"profile", w.Profile, "until", w.Until, "why", w.Why)
	}
	return nil
}

// rateLimitFailure records a rejected window of unknown reset for an attempt that failed
// with kind rate_limit without saying so in a task.rate_limit first (an NDJSON agent's
// worker.result alone): the group backs off. Errors are logged, never returned: recording
// the attempt's failure matters more.
func (sv *supervisor) rateLimitFailure(ctx context.Context, a *attemptRun, f domain.Failure) {
	if f.Kind != domain.FailureRateLimit || a.rateLimited.Load() {
		return
	}
	if err := sv.rateLimit(ctx, a, &agent.RateLimit{Status: agent.RateRejected}); err != nil {
		sv.log.Error("rate-limit window not recorded", "mission_id", a.fence.MissionID, "profile", a.profile.Name, "err", err)
	}
}

// rateRoom lifts the group's window after an attempt of it completed: the model answered
// (after any retry of the CLI's own), so the window has room (Claude Code with an API key
// never says "allowed"); the next unknown-reset rejection backs off from the first step. A
// pause whose end the provider gave stands when this attempt was already running before it
// (engine.NextRateWindow, CompletedStarted).
func (sv *supervisor) rateRoom(ctx context.Context, a *attemptRun) {
	began := a.mission.StartedAt // the attempt's start as stored (a re-attached agent began before this process)
	if began.IsZero() {
		began = a.startedAt
	}
	err := sv.rateSignal(ctx, a, &agent.RateLimit{Status: agent.RateAllowed}, began)
	switch {
	case errors.Is(err, domain.ErrStoreUnavailable):
		// Every completion looks for a window to lift, paused or not: an outage is no news
		// about rate limits. A window left standing lifts at its end, or at the next completion.
		sv.log.Warn("could not check for a rate-limit window to lift after the attempt: the database is unavailable",
			"mission_id", a.fence.MissionID, "profile", a.profile.Name, "err", err)
	case err != nil:
		sv.log.Error("rate-limit window not lifted", "mission_id", a.fence.MissionID, "profile", a.profile.Name, "err", err)
	}
}

// rateWaker wakes the tick when the earliest rate-limit window of the last plan ends, so a
// paused profile's missions start at the reset (not at the next periodic tick).
type rateWaker struct {
	mu sync.Mutex
	at time.Time
	t  *time.Timer
}

// wakeAtRateResets arms the waker for the earliest window of tp's snapshot still in force
// (re-arming only when that time changed).
func (s *Scheduler) wakeAtRateResets(tp *tickPlan) {
	var next time.Time
	for _, w := range tp.snap.RateWindows {
		if w.Active(tp.now) && (next.IsZero() || w.Until.Before(next)) {
			next = w.Until
		}
	}
	rw := &s.rateWake
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if next.IsZero() || next.Equal(rw.at) {
		return
	}
	if rw.t != nil {
		rw.t.Stop()
	}
	rw.at = next
	rw.t = time.AfterFunc(next.Sub(tp.now)+10*time.Millisecond, s.Wake)
}
