package engine

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// readUsage fills in the running spend of d's attempt in flight, the mission's token limit
// (kept apart from its row) and, when attempts ended
// without any usage, the note that says which profiles reported none: a budget cannot act
// on an agent that says nothing of what it spends, and get_mission says so rather than show
// a silent zero.
func (d *MissionDetail) readUsage(ctx context.Context, r Reader) error {
	run, err := r.UsageRunningGet(ctx, d.Mission.ID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
	case err != nil:
		return err
	case run.Attempt == d.Mission.Attempt:
		u := run.Usage
		d.RunningUsage = &u
	}
	d.UsageNote = usageNote(d.Attempts)
	d.TokenLimit, err = r.MissionTokenLimitGet(ctx, d.Mission.ID)
	return err
}

// usageNote is "usage: not reported by profile P[, Q]" for the profiles whose finished
// attempts (completed or failed: ones that ran) reported no tokens and no cost, "" otherwise.
func usageNote(attempts []domain.Attempt) string {
	var silent []string
	for _, a := range attempts {
		ran := a.Outcome == domain.OutcomeCompleted || a.Outcome == domain.OutcomeFailed
		if ran && a.Usage.Tokens() == 0 && a.Usage.CostUSD == 0 && a.Profile != "" && !slices.Contains(silent, a.Profile) {
			silent = append(silent, a.Profile)
		}
	}
	if len(silent) == 0 {
		return ""
	}
	word := "profile "
	if len(silent) > 1 {
		word = "profiles "
	}
	return "usage: not reported by " + word + strings.Join(silent, ", ") + " (budgets in tokens and dollars cannot act on it; wall time still does)"
}
