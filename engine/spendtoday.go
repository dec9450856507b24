package engine

import (
	"context"
	"sort"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// ProfileSpend is what one profile spent on Day (DayKey of now in the budgets' time zone):
// Ended on the attempts that ended that day (spend_daily, the figure its daily cap counts)
// and InFlight on its attempts running now (their last usage reports). Amounts are tokens
// and US dollars as agents reported them, priced from the price table where they gave none.
type ProfileSpend struct {
	Profile  string       `json:"profile"`
	Day      string       `json:"day"`
	Ended    domain.Usage `json:"ended"`
	InFlight domain.Usage `json:"in_flight"`
}

// Total is Ended plus InFlight.
func (p ProfileSpend) Total() domain.Usage { return sumUsage(p.Ended, p.InFlight) }

// SpendToday returns every profile that spent something today, ended or in flight, by
// profile name, in one read transaction (the daily caps' source: ProfileDayHolds reads the
// same rows). Errors are the store's.
func (e *Engine) SpendToday(ctx context.Context) ([]ProfileSpend, error) {
	day := DayKey(e.Now(), e.Budgets().Day)
	return viewValue(ctx, e, func(r Reader) ([]ProfileSpend, error) {
		ended, err := r.SpendDayList(ctx, day)
		if err != nil {
			return nil, err
		}
		running, err := r.UsageRunningList(ctx)
		if err != nil {
			return nil, err
		}
		by := map[string]*ProfileSpend{}
		get := func(p string) *ProfileSpend {
			if by[p] == nil {
				by[p] = &ProfileSpend{Profile: p, Day: day}
			}
			return by[p]
		}
		for p, u := range ended {
			get(p).Ended = u
		}
		for _, u := range running {
			s := get(u.Profile)
			s.InFlight = sumUsage(s.InFlight, u.Usage)
		}
		out := make([]ProfileSpend, 0, len(by))
		for _, s := range by {
			out = append(out, *s)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Profile < out[j].Profile })
		return out, nil
	})
}
