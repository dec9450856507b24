package engine

import (
	"context"
	"errors"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"testing"
)

// voyageWrites is a Tx that records voyage writes (every other method is absent: calling
// one fails the test by panicking on the nil interface).
type voyageWrites struct {
	Tx
	saved []domain.VoyageState
}

func (w *voyageWrites) VoyageUpdate(_ context.Context, v *domain.Voyage, _ domain.VoyageState) error {
	w.saved = append(w.saved, v.State)
	return nil
}

// Every legal move is written; every other move is refused before the store sees it, with an
// error that names the voyage, both states and the operation.
func TestSaveVoyage_OnlyTheTableMoves(t *testing.T) {
	states := domain.AllVoyageStates()
	ops := []string{"activate", "settle", "reopen", "cancel", "usage"}
	for _, from := range states {
		for _, to := range states {
			for _, opName := range ops {
				w := &voyageWrites{}
				o := &op{ctx: context.Background(), tx: w}
				v := &domain.Voyage{ID: "vyg_x", State: to}
				err := o.saveVoyage(v, from, opName)
				legal := from == to || domain.CanVoyageTransition(from, to, opName)
				switch {
				case legal && (err != nil || len(w.saved) != 1):
					t.Errorf("%s -> %s by %s: legal, but err=%v writes=%v", from, to, opName, err, w.saved)
				case !legal && (!errors.Is(err, domain.ErrIllegalTransition) || len(w.saved) != 0):
					t.Errorf("%s -> %s by %s: illegal, but err=%v writes=%v", from, to, opName, err, w.saved)
				case !legal:
					var te *domain.VoyageTransitionError
					if !errors.As(err, &te) || te.From != from || te.To != to || te.Op != opName {
						t.Errorf("%s -> %s by %s: error %v does not name the move", from, to, opName, err)
					}
				}
			}
		}
	}
}
