package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// rateChecks are the doctor's findings about rate-limit windows: one warning per limit group
// whose window still pauses it or halves its concurrency, saying until when and why (the
// same sentence the held missions carry); none when every window has room.
func (a *app) rateChecks(ctx context.Context) []check {
	ws, err := a.eng.RateWindows(ctx)
	if err != nil {
		return []check{{Name: "rate-limit windows", Detail: err.Error()}}
	}
	now := a.eng.Now()
	groups := make([]string, 0, len(ws))
	for g, w := range ws {
		if w.Active(now) {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	var out []check
	for _, g := range groups {
		w := ws[g]
		what := "paused: no mission of its profiles starts"
		if w.Status == engine.RateWarning {
			what = "nearly used up: its profiles run at half concurrency"
		}
		out = append(out, check{Name: "rate-limit window " + g, OK: true, Warn: true,
			Detail: fmt.Sprintf("%s until %s (%s); it ends by itself", what, w.Until.UTC().Format(time.RFC3339), w.Why)})
	}
	return out
}
