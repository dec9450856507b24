package engine

import (
	"context"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// MetricCounts is what the store counts for a metrics scrape (Reader.MetricCounts): each
// figure comes from a counter kept with the rows or from a partial index of live work only,
// so reading it costs the same after a million finished missions as after ten.
type MetricCounts struct {
	// Missions is the number of missions per state (the mission_counts counters).
	Missions map[domain.MissionState]int
	// Voyages is the number of voyages per state (the voyage counters); states with none are absent.
	Voyages map[domain.VoyageState]int
	// Holds is the number of recorded holds of missions still waiting, per hold code (as
	// Reader.HoldCounts: waiting to run, or completed and waiting to land).
	Holds map[string]int
	// Landings is the number of completed missions whose landing is not settled, per landing
	// state: the landing queue (pending, review, approved, waiting) and the landings that
	// wait for a person or a repair (approval, repair). Settled landings are absent.
	Landings map[domain.LandingState]int
	// Live is the number of leased or running missions per profile ("" for none recorded).
	Live map[string]int
	// OpenEscalations is the number of escalations in state open.
	OpenEscalations int
}

// MetricCounts reads the store's counts for a metrics scrape in one read transaction (one
// statement on SQLite). Its cost does not grow with history (see MetricCounts the type).
func (e *Engine) MetricCounts(ctx context.Context) (MetricCounts, error) {
	return viewValue(ctx, e, func(r Reader) (MetricCounts, error) { return r.MetricCounts(ctx) })
}

// Observer is told what this process's engine committed, after the commit (never for a
// transaction that rolled back or was retried away): the attempts it started (a lease taken,
// managed or pull mode) and the attempts it ended, with the attempt record as stored (its
// outcome, profile and usage). Calls come from the committing goroutine, so an Observer must
// be safe for concurrent use and quick (a metrics counter, not I/O). Other processes sharing
// the database tell their own observers, not this one.
type Observer interface {
	// AttemptStarted is called once per lease acquired, with the profile recorded on the
	// mission (the agent id when the taker named no profile).
	AttemptStarted(profile string)
	// AttemptEnded is called once per attempt record written (domain.Attempt.Outcome says
	// how it ended).
	AttemptEnded(a domain.Attempt)
}

// observed is what one transaction tells the Observer once it committed.
type observed struct {
	started []string
	ended   []domain.Attempt
}

// observe tells the engine's Observer (if any) what a committed transaction did.
func (e *Engine) observe(o *op) {
	obs := e.opt.Observer
	if obs == nil || o == nil {
		return
	}
	for _, p := range o.seen.started {
		obs.AttemptStarted(p)
	}
	for _, a := range o.seen.ended {
		obs.AttemptEnded(a)
	}
}
