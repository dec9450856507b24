package scheduler

import (
	"context"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// pullGroup is the limit group of a pull-mode agent: the limit_group of the configured
// profile its agent id names, else the agent id itself (a pull agent's missions record it
// as their profile).
func (p *PullService) pullGroup(agentID string) string {
	for _, pr := range p.s.cfg.Profiles {
		if pr.Name == agentID {
			return pr.RateGroup()
		}
	}
	return agentID
}

// rateRefusal returns a *RateLimitedError when the agent's group is paused now, else nil.
func (p *PullService) rateRefusal(ctx context.Context, agentID string) error {
	ws, err := p.s.eng.RateWindows(ctx)
	if err != nil {
		return err
	}
	w, ok := ws[p.pullGroup(agentID)]
	if !ok || w.Status != engine.RatePaused || !w.Active(p.s.eng.Now()) {
		return nil
	}
	r := engine.RateLimitedReason(agentID, w)
	p.s.log.Info("claim refused: the agent's limit group is rate-limited", "agent", agentID, "group", w.Group, "until", w.Until)
	return &engine.RateLimitedError{Reason: r}
}

// Fail records a pull-mode attempt's failure (the engine's Fail). One of kind rate_limit
// also pauses the agent's limit group as a managed agent's would (engine.RecordRateLimit):
// until rl's reset plus the margin, or after its retry-after, else the next backoff step;
// rl may be nil (nothing known). The window is recorded after the failure, and an error
// recording it is logged, not returned: the failure matters more.
func (p *PullService) Fail(ctx context.Context, f domain.Fence, req engine.FailRequest, rl *agent.RateLimit) (domain.Mission, error) {
	m, err := p.s.eng.Fail(ctx, f, req)
	if err != nil || req.Failure.Kind != domain.FailureRateLimit {
		return m, err
	}
	limit := agent.RateLimit{Status: agent.RateRejected}
	if rl != nil {
		limit.ResetsAt, limit.RetryAfterSeconds, limit.LimitType = rl.ResetsAt, rl.RetryAfterSeconds, rl.LimitType
	}
	sig := engine.RateSignal{Group: p.pullGroup(m.Profile), Profile: m.Profile, MissionID: m.ID, Limit: limit}
	w, _, rerr := p.s.eng.RecordRateLimit(ctx, sig, p.s.cfg.RateLimit)
	if rerr != nil {
		p.s.log.Error("rate-limit window of a pull-mode agent not recorded", "mission_id", m.ID, "agent", sig.Profile, "err", rerr)
		return m, nil
	}
	p.s.log.Warn("pull-mode agent rate-limited: its claims are refused", "group", w.Group, "agent", sig.Profile, "until", w.Until, "why", w.Why)
	return m, nil
}

// rateRoomAfter lifts the agent's group's window after its attempt (begun at began) completed,
// as a managed attempt's completion does (engine.NextRateWindow, CompletedStarted).
func (p *PullService) rateRoomAfter(ctx context.Context, owner, missionID string, began time.Time) {
	sig := engine.RateSignal{Group: p.pullGroup(owner), Profile: owner, MissionID: missionID,
		Limit: agent.RateLimit{Status: agent.RateAllowed}, CompletedStarted: began}
	if _, _, err := p.s.eng.RecordRateLimit(ctx, sig, p.s.cfg.RateLimit); err != nil {
		p.s.log.Error("rate-limit window of a pull-mode agent not lifted", "mission_id", missionID, "agent", owner, "err", err)
	}
}
