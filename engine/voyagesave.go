package engine

import "github.com/mcp-scheduler/mcp-scheduler/engine/domain"

// saveVoyage writes v where the stored row is still in state from, after checking that op
// may move a voyage from there to v.State (a write that keeps the state is always allowed).
// Every voyage write of the engine goes through here, so the table in voyagestate.go is the
// only source of legal moves.
func (o *op) saveVoyage(v *domain.Voyage, from domain.VoyageState, op string) error {
	if v.State != from && !domain.CanVoyageTransition(from, v.State, op) {
		return &domain.VoyageTransitionError{VoyageID: v.ID, From: from, To: v.State, Op: op}
	}
	return o.tx.VoyageUpdate(o.ctx, v, from)
}
