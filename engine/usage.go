package engine

import (
	"context"
	"errors"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// ReportUsage records what an attempt in flight has spent so far (u.Usage, cumulative: it
// replaces the previous report) and checks the hard budgets on it: the mission's spend is its
// ended attempts' plus this one's, the voyage's its ended attempts' plus every attempt of it in
// flight, the profile's day what it spent that day plus every attempt of it in flight
// (CheckSpend). It returns the budget crossed, or nil; crossing one records the event
// budget.crossed once per attempt and scope. Fenced by the epoch (u.MissionID, u.Epoch);
// u.Profile defaults to the mission's. The caller (the supervisor) stops the agent on a
// breach and ends the attempt with failure kind budget.
func (e *Engine) ReportUsage(ctx context.Context, u RunningUsage) (*Breach, error) {
	var out *Breach
	if u.Usage.InputTokens < 0 || u.Usage.OutputTokens < 0 || u.Usage.CacheReadTokens < 0 || u.Usage.CacheWriteTokens < 0 || !(u.Usage.CostUSD >= 0) {
		return nil, domain.Invalid("usage", "has a negative value", "report tokens and cost as non-negative numbers")
	}
	err := e.update(ctx, "", func(o *op) error {
		out = nil
		m, err := o.fenced(domain.Fence{MissionID: u.MissionID, Epoch: u.Epoch})
		if err != nil {
			return err
		}
		prev, err := o.tx.UsageRunningGet(o.ctx, m.ID)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return err
		}
		u.Attempt, u.VoyageID, u.UpdatedAt = m.Attempt, m.VoyageID, o.now
		if u.Profile == "" {
			u.Profile = m.Profile
		}
		if err := o.tx.UsageRunningPut(o.ctx, &u); err != nil {
			return err
		}
		s, err := o.spendOf(&m, u.Profile)
		if err != nil {
			return err
		}
		out = CheckSpend(s)
		if out == nil {
			return nil
		}
		was := CheckSpend(o.spendBefore(s, prev, u))
		if was != nil && was.Scope == out.Scope {
			return nil // crossed at an earlier report of this attempt: recorded then
		}
		return o.emit("budget.crossed", &m, "", map[string]any{"breach": out, "message": out.Message(), "usage": u.Usage})
	})
	return out, err
}

// spendOf gathers the spend and limits of m's budgets (CheckSpend's input), counting every
// attempt in flight from usage_running.
func (o *op) spendOf(m *domain.Mission, profile string) (Spend, error) {
	b := o.e.Budgets()
	s := Spend{Mission: m, MissionSpent: m.Usage, Profile: profile, Daily: b.Profiles[profile], Day: DayKey(o.now, b.Day)}
	running, err := o.tx.UsageRunningList(o.ctx)
	if err != nil {
		return s, err
	}
	if s.MissionTokens, err = o.tx.MissionTokenLimitGet(o.ctx, m.ID); err != nil {
		return s, err
	}
	if m.VoyageID != "" {
		v, err := o.tx.VoyageGet(o.ctx, m.VoyageID)
		if err != nil {
			return s, err
		}
		s.Voyage, s.VoyageSpent = &v, v.Usage
	}
	if s.Daily != (DailyBudget{}) {
		if s.DaySpent, err = o.tx.SpendDayGet(o.ctx, profile, s.Day); err != nil {
			return s, err
		}
	}
	for _, r := range running {
		if r.MissionID == m.ID {
			s.MissionSpent = sumUsage(s.MissionSpent, r.Usage)
		}
		if s.Voyage != nil && r.VoyageID == m.VoyageID {
			s.VoyageSpent = sumUsage(s.VoyageSpent, r.Usage)
		}
		if r.Profile == profile {
			s.DaySpent = sumUsage(s.DaySpent, r.Usage)
		}
	}
	return s, nil
}

// spendBefore is s as it was before this report replaced prev (nothing when prev was another
// attempt's or absent).
func (o *op) spendBefore(s Spend, prev, now RunningUsage) Spend {
	old := domain.Usage{}
	if prev.MissionID != "" && prev.Attempt == now.Attempt {
		old = prev.Usage
	}
	minus := func(a domain.Usage) domain.Usage {
		return domain.Usage{InputTokens: a.InputTokens - now.Usage.InputTokens + old.InputTokens,
			OutputTokens: a.OutputTokens - now.Usage.OutputTokens + old.OutputTokens,
			CostUSD:      roundCost(a.CostUSD - now.Usage.CostUSD + old.CostUSD)}
	}
	s.MissionSpent, s.VoyageSpent, s.DaySpent = minus(s.MissionSpent), minus(s.VoyageSpent), minus(s.DaySpent)
	return s
}

// closeUsage ends the running spend of m's current attempt: the attempt's usage is reported
// when the agent gave one (its final figure), else what it last reported while running (so an
// agent killed on a budget, or lost in a restart, still counts). The row is removed and the
// usage added to the profile's day. It returns the usage to record (nil: none at all).
func (o *op) closeUsage(m *domain.Mission, reported *domain.Usage) (*domain.Usage, error) {
	run, found, err := o.runningUsage(m.ID)
	if err != nil {
		return nil, err
	}
	return o.closeRun(m, reported, run, found)
}

// runningUsage reads the running spend of a mission's attempt (found false: none recorded).
func (o *op) runningUsage(missionID string) (RunningUsage, bool, error) {
	run, err := o.tx.UsageRunningGet(o.ctx, missionID)
	if errors.Is(err, domain.ErrNotFound) {
		return run, false, nil
	}
	return run, err == nil, err
}

// closeRun is closeUsage with the running spend already read (run, when found).
func (o *op) closeRun(m *domain.Mission, reported *domain.Usage, run RunningUsage, found bool) (*domain.Usage, error) {
	if found {
		if err := o.tx.UsageRunningDelete(o.ctx, m.ID); err != nil {
			return nil, err
		}
		if run.Attempt == m.Attempt && noUsage(reported) {
			u := run.Usage
			reported = &u
		}
	}
	if reported == nil || m.Profile == "" || (reported.Tokens() == 0 && reported.CostUSD == 0) {
		return reported, nil
	}
	return reported, o.tx.SpendDayAdd(o.ctx, m.Profile, DayKey(o.now, o.e.Budgets().Day), *reported)
}

// noUsage says u reports nothing spent (nil, or no tokens and no cost).
func noUsage(u *domain.Usage) bool { return u == nil || u.Tokens() == 0 && u.CostUSD == 0 }

// RunningUsageOf returns the running spend of a mission's attempt in flight (ErrNotFound:
// none reported).
func (e *Engine) RunningUsageOf(ctx context.Context, missionID string) (RunningUsage, error) {
	return viewValue(ctx, e, func(r Reader) (RunningUsage, error) { return r.UsageRunningGet(ctx, missionID) })
}
