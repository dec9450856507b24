package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// DailyBudget is one profile's hard cap per calendar day: US dollars and tokens (input,
// cached included, plus output); 0 means no cap of that measure.
type DailyBudget struct {
	CostUSD float64
	Tokens  int64
}

// Budgets are the budgets configured beyond missions' and voyages' own limits: each profile's
// daily cap (by profile name) and the time zone whose calendar day the caps count (nil: UTC).
type Budgets struct {
	Profiles map[string]DailyBudget
	Day      *time.Location
}

// Budgets returns the daily caps in force (Options.Budgets, or the last SetBudgets).
func (e *Engine) Budgets() Budgets { return *e.budgets.Load() }

// SetBudgets replaces the daily caps and their day while the engine runs (a configuration
// reload). Spend already recorded stays; the next check, report or plan uses b. b must not be
// changed after the call.
func (e *Engine) SetBudgets(b Budgets) { e.budgets.Store(&b) }

// Budget scopes and measures (Breach).
const (
	ScopeMission = "mission"
	ScopeVoyage  = "voyage"
	ScopeProfile = "profile" // a profile's daily cap
	MeasureCost  = "cost"
	MeasureToken = "tokens"
)

// Breach is one hard budget crossed: whose (Scope, Subject: a mission or voyage id, or a
// profile name), what (Measure), the spend and the limit (US dollars or tokens) and, for a
// daily cap, the Day it counts.
type Breach struct {
	Scope   string  `json:"scope"`
	Subject string  `json:"subject"`
	Measure string  `json:"measure"`
	Spent   float64 `json:"spent"`
	Limit   float64 `json:"limit"`
	Day     string  `json:"day,omitempty"`
}

// Message is the one sentence that says a budget was crossed, used by the failure, the
// escalation, the hold and the logs alike.
func (b Breach) Message() string {
	return fmt.Sprintf("%s budget crossed: spent %s of %s; raise it (%s) or cancel", b.what(), b.amount(b.Spent), b.amount(b.Limit), b.raise())
}

// HoldMessage is the sentence of a hold that keeps work from starting while b stands.
func (b Breach) HoldMessage() string {
	return fmt.Sprintf("%s budget is spent (%s of %s): nothing more starts until it is raised (%s)", b.what(), b.amount(b.Spent), b.amount(b.Limit), b.raise())
}

func (b Breach) what() string {
	switch b.Scope {
	case ScopeProfile:
		return fmt.Sprintf("profile %s's daily %s", b.Subject, b.Measure)
	case ScopeVoyage:
		return fmt.Sprintf("voyage %s's %s", b.Subject, b.Measure)
	}
	return fmt.Sprintf("mission %s's %s", b.Subject, b.Measure)
}

func (b Breach) amount(v float64) string {
	if b.Measure == MeasureCost {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("%.0f tokens", v)
}

func (b Breach) raise() string {
	switch {
	case b.Scope == ScopeProfile && b.Measure == MeasureCost:
		return "[[profiles]] daily_cost_limit_usd in the configuration, or wait for the next day (" + b.Day + " ends)"
	case b.Scope == ScopeProfile:
		return "[[profiles]] daily_token_limit in the configuration, or wait for the next day (" + b.Day + " ends)"
	case b.Scope == ScopeVoyage && b.Measure == MeasureToken:
		return "update_voyage token_limit"
	case b.Scope == ScopeVoyage:
		return "update_voyage cost_limit_usd"
	case b.Measure == MeasureToken:
		return "update_mission token_limit"
	}
	return "update_mission cost_limit_usd"
}

// Spend is what one budget check looks at: each scope's spend so far (ended attempts plus
// those in flight) and its limits.
type Spend struct {
	Mission      *domain.Mission // its CostLimitUSD
	MissionSpent domain.Usage
	// MissionTokens is the mission's token limit (0: none), read apart from its row
	// (Reader.MissionTokenLimitGet).
	MissionTokens int64
	Voyage        *domain.Voyage // nil: none; its CostLimitUSD and TokenLimit
	VoyageSpent   domain.Usage
	Profile       string
	Daily         DailyBudget
	DaySpent      domain.Usage
	Day           string
}

// CheckSpend is the hard-budget rule: the first budget the spend reached or crossed —
// the mission's cost limit and token limit, then its voyage's, then the profile's daily
// dollars and tokens (tokens are input, cached included, plus output) — or nil. The supervisor applies it on every usage report; the planner's holds apply it
// before a start (VoyageHold, ProfileDayHold).
func CheckSpend(s Spend) *Breach {
	if m := s.Mission; m != nil && m.CostLimitUSD > 0 && s.MissionSpent.CostUSD >= m.CostLimitUSD {
		return &Breach{Scope: ScopeMission, Subject: m.ID, Measure: MeasureCost, Spent: s.MissionSpent.CostUSD, Limit: m.CostLimitUSD}
	}
	if m := s.Mission; m != nil && s.MissionTokens > 0 && s.MissionSpent.Tokens() >= s.MissionTokens {
		return &Breach{Scope: ScopeMission, Subject: m.ID, Measure: MeasureToken, Spent: float64(s.MissionSpent.Tokens()), Limit: float64(s.MissionTokens)}
	}
	if v := s.Voyage; v != nil && v.CostLimitUSD > 0 && s.VoyageSpent.CostUSD >= v.CostLimitUSD {
		return &Breach{Scope: ScopeVoyage, Subject: v.ID, Measure: MeasureCost, Spent: s.VoyageSpent.CostUSD, Limit: v.CostLimitUSD}
	}
	if v := s.Voyage; v != nil && v.TokenLimit > 0 && s.VoyageSpent.Tokens() >= v.TokenLimit {
		return &Breach{Scope: ScopeVoyage, Subject: v.ID, Measure: MeasureToken, Spent: float64(s.VoyageSpent.Tokens()), Limit: float64(v.TokenLimit)}
	}
	if s.Daily.CostUSD > 0 && s.DaySpent.CostUSD >= s.Daily.CostUSD {
		return &Breach{Scope: ScopeProfile, Subject: s.Profile, Measure: MeasureCost, Spent: s.DaySpent.CostUSD, Limit: s.Daily.CostUSD, Day: s.Day}
	}
	if s.Daily.Tokens > 0 && s.DaySpent.Tokens() >= s.Daily.Tokens {
		return &Breach{Scope: ScopeProfile, Subject: s.Profile, Measure: MeasureToken, Spent: float64(s.DaySpent.Tokens()), Limit: float64(s.Daily.Tokens), Day: s.Day}
	}
	return nil
}

// budgetHold is the hold of a start that the spend s (its ended attempts) keeps back: the
// rule is CheckSpend's and the sentence Breach.HoldMessage's, the same ones the supervisor
// and the profiles' daily caps use, so a spent budget reads the same wherever it is shown.
func budgetHold(s Spend) *Reason {
	if br := CheckSpend(s); br != nil {
		return &Reason{Code: WhyBudget, Message: br.HoldMessage()}
	}
	return nil
}

// sumUsage adds b to a (cost rounded to a nanodollar, as every stored sum).
func sumUsage(a, b domain.Usage) domain.Usage {
	return domain.Usage{InputTokens: a.InputTokens + b.InputTokens, OutputTokens: a.OutputTokens + b.OutputTokens,
		CacheReadTokens: a.CacheReadTokens + b.CacheReadTokens, CacheWriteTokens: a.CacheWriteTokens + b.CacheWriteTokens,
		CostUSD: roundCost(a.CostUSD + b.CostUSD)}
}

// ProfileDayHolds returns, by profile name, the hold of every profile whose daily budget is
// spent today (what it spent on ended attempts plus its attempts in flight): the planner
// gives none of them new work (code budget) until the day ends or the cap is raised. Only
// profiles with a cap are read.
func (e *Engine) ProfileDayHolds(ctx context.Context) (map[string]Reason, error) {
	b := e.Budgets()
	caps := b.Profiles
	if len(caps) == 0 {
		return nil, nil
	}
	day := DayKey(e.Now(), b.Day)
	return viewValue(ctx, e, func(r Reader) (map[string]Reason, error) {
		running, err := r.UsageRunningList(ctx)
		if err != nil {
			return nil, err
		}
		out := map[string]Reason{}
		for name, daily := range caps {
			spent, err := r.SpendDayGet(ctx, name, day)
			if err != nil {
				return nil, err
			}
			for _, u := range running {
				if u.Profile == name {
					spent = sumUsage(spent, u.Usage)
				}
			}
			if r := budgetHold(Spend{Profile: name, Daily: daily, DaySpent: spent, Day: day}); r != nil {
				out[name] = *r
			}
		}
		return out, nil
	})
}
