package scheduler

import (
	"context"
	"errors"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// settle decides every open voyage: completed, blocked with a report, or going on, with the
// agent rule of the tick's plan tp (nil: none was made).
func (s *Scheduler) settle(ctx context.Context, rep *TickReport, tp *tickPlan) error {
	vs, err := s.eng.Voyages(ctx, []domain.VoyageState{domain.VoyageOpen, domain.VoyageActive, domain.VoyageBlocked}, 200)
	if err != nil || len(vs) == 0 {
		return err
	}
	check, err := s.agentCheck(ctx, tp)
	if err != nil {
		return err
	}
	var errs []error
	for _, v := range vs {
		st, err := s.eng.SettleVoyage(ctx, v.ID, check)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if st.Changed {
			rep.Settled = append(rep.Settled, v.ID)
			s.log.Info("voyage settled", "voyage_id", v.ID, "state", st.Voyage.State)
		}
	}
	return errors.Join(errs...)
}
