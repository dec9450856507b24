package main

import (
	"context"
	"slices"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools/watch"
)

// cliWordsSource is the watch view's source with the engine's sentences (why a mission waits,
// a decision, an escalation's reason and decision) told in the command line's words
// (cliText), as the other commands print them; the engine's text is what --json prints.
type cliWordsSource struct{ watch.Source }

// Snapshot implements watch.Source.
func (s cliWordsSource) Snapshot(ctx context.Context) (watch.Snapshot, error) {
	snap, err := s.Source.Snapshot(ctx)
	if err != nil {
		return snap, err
	}
	snap.Voyages = slices.Clone(snap.Voyages)
	for i := range snap.Voyages {
		v := &snap.Voyages[i]
		v.Missions = slices.Clone(v.Missions)
		for j := range v.Missions {
			v.Missions[j].Why = reasonsInCLIWords(v.Missions[j].Why, v.Missions[j].ID, v.ID)
		}
	}
	snap.Waiting = slices.Clone(snap.Waiting)
	for i := range snap.Waiting {
		snap.Waiting[i].Why = reasonsInCLIWords(snap.Waiting[i].Why, snap.Waiting[i].ID, snap.Waiting[i].VoyageID)
	}
	snap.Escalations = escalationsInCLIWords(snap.Escalations)
	return snap, nil
}

// Mission implements watch.Source.
func (s cliWordsSource) Mission(ctx context.Context, id string) (watch.MissionView, error) {
	v, err := s.Source.Mission(ctx, id)
	if err != nil {
		return v, err
	}
	m := &v.Detail.Mission
	v.Detail.WhyNotRunning = reasonsInCLIWords(v.Detail.WhyNotRunning, m.ID, m.VoyageID)
	if m.Decision != nil {
		d := *m.Decision
		d.Reason = cliText(d.Reason, m.ID, m.VoyageID)
		m.Decision = &d
	}
	if m.LastFailure != nil {
		f := *m.LastFailure
		f.Summary = cliText(f.Summary, m.ID, m.VoyageID)
		m.LastFailure = &f
	}
	v.Detail.Attempts = slices.Clone(v.Detail.Attempts)
	for i, a := range v.Detail.Attempts {
		if a.Failure != nil {
			f := *a.Failure
			f.Summary = cliText(f.Summary, m.ID, m.VoyageID)
			v.Detail.Attempts[i].Failure = &f
		}
	}
	v.Escalations = escalationsInCLIWords(v.Escalations)
	return v, nil
}

// reasonsInCLIWords is rs with each message in the command line's words (a copy).
func reasonsInCLIWords(rs []engine.Reason, ids ...string) []engine.Reason {
	out := slices.Clone(rs)
	for i := range out {
		out[i].Message = cliText(out[i].Message, ids...)
	}
	return out
}

// escalationsInCLIWords is es with each reason, decision, next step and evidence line in the
// command line's words (a copy).
func escalationsInCLIWords(es []domain.Escalation) []domain.Escalation {
	out := slices.Clone(es)
	for i := range out {
		e, ids := &out[i], escalationIDs(out[i])
		e.Reason, e.DecisionRequired = cliText(e.Reason, ids...), cliText(e.DecisionRequired, ids...)
		e.SafeNextStep = cliText(e.SafeNextStep, ids...)
		e.Evidence = slices.Clone(e.Evidence)
		for j, ev := range e.Evidence {
			e.Evidence[j] = cliText(ev, ids...)
		}
	}
	return out
}
