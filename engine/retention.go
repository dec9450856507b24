package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"time"
)

// errDryRun rolls a dry run's batch back after it counted what it would delete.
var errDryRun = errors.New("dry run")

// Defaults of PruneOptions.
const (
	DefaultPruneBatch = 100                   // missions per write transaction
	DefaultPrunePause = 20 * time.Millisecond // between batches, so other writers get the lock
)

// Reasons a finished mission older than the cutoff is kept (PruneReport.Kept).
const (
	KeepVoyageUnfinished = "voyage not finished"
	KeepDependent        = "an unfinished mission depends on it"
	KeepChild            = "an unfinished mission is its child or works on it"
	KeepEscalation       = "an open escalation concerns it"
	KeepLanding          = "its landing is not settled"
	KeepTooRecent        = "finished after the cutoff"
)

// PruneOptions say what PruneHistory removes: finished history from before Before.
type PruneOptions struct {
	// Before is the cutoff: missions finished and voyages settled before it may go.
	Before time.Time
	// Batch is how many candidate missions one write transaction looks at (default
	// DefaultPruneBatch); Pause is the wait between two batches (default DefaultPrunePause).
	Batch int
	Pause time.Duration
	// DryRun counts what would go and changes nothing.
	DryRun bool
	Actor  string
}

// PruneReport is what PruneHistory removed (or would remove, in a dry run).
type PruneReport struct {
	Before  time.Time   `json:"before"`
	DryRun  bool        `json:"dry_run"`
	Removed PruneCounts `json:"removed"`
	// Missions are the ids of the pruned missions (their attempt directories may go too).
	Missions []string `json:"missions,omitempty"`
	// Kept counts finished missions older than the cutoff that stay, by reason.
	Kept    map[string]int `json:"kept,omitempty"`
	Batches int            `json:"batches"`
}

// PruneHistory deletes history a person no longer needs (design: docs/configuration.md,
// [retention]): finished missions (completed, failed, cancelled) that finished before
// opt.Before, with their events, attempts, landings, workspace rows, dependencies and the
// resolved escalations that concern only them; then completed or cancelled voyages settled
// before it that have no mission left; then scheduler events and waves older than it.
//
// A mission stays while its voyage is not finished, while an unfinished mission depends on
// it, is its child or works on it (review, repair), while an open escalation names it, or
// while its landing is not settled. Missions go whole (their events with them), so the
// event log still replays to the tables (VerifyReplay). Work goes in batches of opt.Batch
// candidates, each one short write transaction that checks the rule again, with a pause in
// between, so the scheduler is never held for long. Each batch that removed anything records
// a history.pruned event. Errors of one batch end the run; what earlier batches did stays.
func (e *Engine) PruneHistory(ctx context.Context, opt PruneOptions) (PruneReport, error) {
	if opt.Before.IsZero() {
		return PruneReport{}, domain.Invalid("before", "is not set", "give the cutoff time (now minus the retention)")
	}
	if opt.Batch <= 0 {
		opt.Batch = DefaultPruneBatch
	}
	if opt.Pause <= 0 {
		opt.Pause = DefaultPrunePause
	}
	rep := PruneReport{Before: opt.Before, DryRun: opt.DryRun, Kept: map[string]int{}}
	p := pruner{e: e, opt: opt, rep: &rep}
	err := p.missions(ctx)
	if err == nil {
		err = p.voyages(ctx)
	}
	if err == nil {
		err = p.global(ctx)
	}
	return rep, err
}

// pruner is one PruneHistory run.
type pruner struct {
	e    *Engine
	opt  PruneOptions
	rep  *PruneReport
	last PruneCounts // the counts of the last batch
	// would is, in a dry run, the missions that would have gone (their voyages may too).
	would map[string]bool
}

// missions walks the candidates page by page; each page is checked and deleted in one Update.
func (p *pruner) missions(ctx context.Context) error {
	return p.walk(ctx, Reader.PruneCandidates, func(o *op, b *pruneBatch, page []PruneCandidate) error {
		return p.missionBatch(o, b, page)
	})
}

// walk reads candidates a page at a time (list, from a read snapshot), handles each page in
// one write batch (do), and pauses between full pages so other writers get the database.
func (p *pruner) walk(ctx context.Context, list func(Reader, context.Context, PruneQuery) ([]PruneCandidate, error),
	do func(o *op, b *pruneBatch, page []PruneCandidate) error) error {
	for cursor := ""; ; {
		var page []PruneCandidate
		if err := p.e.view(ctx, func(r Reader) error {
			var err error
			page, err = list(r, ctx, PruneQuery{Before: p.opt.Before, Cursor: cursor, Limit: p.opt.Batch})
			return err
		}); err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		cursor = page[len(page)-1].Cursor
		if err := p.batch(ctx, func(o *op, b *pruneBatch) error { return do(o, b, page) }); err != nil {
			return err
		}
		if len(page) < p.opt.Batch {
			return nil
		}
		if err := p.pause(ctx); err != nil {
			return err
		}
	}
}

// pruneBatch is what one batch removed: counts, mission ids and the reasons of those kept.
type pruneBatch struct {
	counts PruneCounts
	ids    []string
	kept   map[string]int
}

// batch runs one write transaction, records a history.pruned event when it removed
// anything and adds its counts to the report (a dry run rolls it back).
func (p *pruner) batch(ctx context.Context, fn func(o *op, b *pruneBatch) error) error {
	var b pruneBatch
	err := p.e.update(ctx, p.opt.Actor, func(o *op) error {
		b = pruneBatch{kept: map[string]int{}} // again from zero if the store reruns fn
		if err := fn(o, &b); err != nil {
			return err
		}
		if b.counts == (PruneCounts{}) {
			return nil
		}
		if err := o.emit("history.pruned", nil, "", map[string]any{"before": p.opt.Before, "removed": b.counts}); err != nil {
			return err
		}
		if p.opt.DryRun {
			return errDryRun
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return err
	}
	p.rep.Batches++
	p.rep.Removed.Add(b.counts)
	p.rep.Missions = append(p.rep.Missions, b.ids...)
	for k, v := range b.kept {
		p.rep.Kept[k] += v
	}
	p.last = b.counts
	return nil
}

func (p *pruner) pause(ctx context.Context) error {
	t := time.NewTimer(p.opt.Pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// voyages prunes finished voyages with no mission left, a batch at a time.
func (p *pruner) voyages(ctx context.Context) error {
	return p.walk(ctx, Reader.VoyagePruneCandidates, func(o *op, b *pruneBatch, page []PruneCandidate) error {
		for _, cand := range page {
			if err := p.dryRunMissions(o, cand.ID); err != nil {
				return err
			}
			got, err := o.tx.VoyagePrune(o.ctx, cand.ID)
			if errors.Is(err, domain.ErrGuard) || errors.Is(err, domain.ErrNotFound) {
				continue // missions of it are kept (counted above), or it is gone
			}
			if err != nil {
				return fmt.Errorf("prune voyage %s: %w", cand.ID, err)
			}
			b.counts.Add(got)
		}
		return nil
	})
}

// dryRunMissions: in a dry run the missions of a voyage were not deleted, so to count the
// voyage the missions that would have gone are deleted first in its (rolled back)
// transaction; when one of them would stay, the voyage stays (VoyagePrune refuses).
func (p *pruner) dryRunMissions(o *op, voyageID string) error {
	if !p.opt.DryRun {
		return nil
	}
	if p.would == nil {
		p.would = map[string]bool{}
		for _, id := range p.rep.Missions {
			p.would[id] = true
		}
	}
	ms, err := o.tx.VoyageMissions(o.ctx, voyageID)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if !p.would[m.ID] {
			return nil
		}
	}
	for _, m := range ms {
		if _, err := o.tx.MissionPrune(o.ctx, m.ID); err != nil {
			return err
		}
	}
	return nil
}

// global prunes scheduler events and waves older than the cutoff, a batch at a time.
func (p *pruner) global(ctx context.Context) error {
	limit := p.opt.Batch * 10 // these rows are small and independent
	for {
		err := p.batch(ctx, func(o *op, b *pruneBatch) error {
			var err error
			b.counts, err = o.tx.PruneGlobal(o.ctx, p.opt.Before, limit)
			return err
		})
		if err != nil || (p.last.Events < limit && p.last.Waves < limit) || p.opt.DryRun {
			return err // a dry run sees the same first batch again: one is what it can count
		}
		if err := p.pause(ctx); err != nil {
			return err
		}
	}
}
