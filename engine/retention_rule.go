package engine

import (
	"errors"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// missionBatch prunes the candidates the rule lets go, inside the batch's transaction.
func (p *pruner) missionBatch(o *op, b *pruneBatch, page []PruneCandidate) error {
	for _, cand := range page {
		m, err := o.tx.MissionGet(o.ctx, cand.ID)
		if errors.Is(err, domain.ErrNotFound) {
			continue // gone meanwhile (purged)
		}
		if err != nil {
			return err
		}
		why, err := p.keepReason(o, &m)
		if err != nil {
			return err
		}
		if why != "" {
			b.kept[why]++
			continue
		}
		got, err := o.tx.MissionPrune(o.ctx, m.ID)
		if err != nil {
			return err
		}
		b.counts.Add(got)
		b.ids = append(b.ids, m.ID)
	}
	return nil
}

// keepReason is the rule: "" when m may be pruned, else why it stays.
func (p *pruner) keepReason(o *op, m *domain.Mission) (string, error) {
	if !m.State.Terminal() || m.FinishedAt.IsZero() || !m.FinishedAt.Before(p.opt.Before) {
		return KeepTooRecent, nil // a retried mission is not finished any more
	}
	if m.State == domain.StateCompleted && !landingSettled(m.Landing) {
		return KeepLanding, nil
	}
	if m.VoyageID != "" {
		v, err := o.tx.VoyageGet(o.ctx, m.VoyageID)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return "", err
		}
		if err == nil && v.State != domain.VoyageCompleted && v.State != domain.VoyageCancelled {
			return KeepVoyageUnfinished, nil
		}
	}
	if why, err := p.keptByOthers(o, m.ID); why != "" || err != nil {
		return why, err
	}
	open, err := o.tx.EscalationList(o.ctx, EscalationFilter{State: "open", MissionID: m.ID, Limit: 1})
	if err != nil {
		return "", err
	}
	if len(open) > 0 {
		return KeepEscalation, nil
	}
	return "", nil
}

// keptByOthers: an unfinished mission depends on id, is its child or has it as subject.
func (p *pruner) keptByOthers(o *op, id string) (string, error) {
	deps, related, err := o.tx.UnfinishedRelated(o.ctx, id)
	switch {
	case err != nil:
		return "", err
	case deps > 0:
		return KeepDependent, nil
	case related > 0:
		return KeepChild, nil
	}
	return "", nil
}

// landingSettled: nothing of a completed mission's landing waits for the scheduler, an
// approval, a review or a decision.
func landingSettled(l domain.LandingState) bool {
	switch l {
	case domain.LandingLanded, domain.LandingNotRequired, domain.LandingLeft, domain.LandingRepair, domain.LandingNone:
		return true
	}
	return false
}
