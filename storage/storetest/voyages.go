package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseVoyages covers VoyageInsert, VoyageGet, VoyageByIdempotencyKey, VoyageUpdate,
// VoyageList, VoyageMissions, VoyageCounts, and the voyage tiebreak the store derives from the voyage state.
func exerciseVoyages(t *testing.T, open Opener) {
	group(t, "VoyageInsert", func(t *testing.T) {
		run(t, "RoundTripsEveryField", open, func(t *testing.T, e *env) {
			v := fullVoyage(e, "v1")
			e.update(func(tx engine.Tx) error { return tx.VoyageInsert(e.ctx, v) })
			requireSameVoyage(t, *v, voyageGet(e, "v1"))
		})
		run(t, "DuplicateIDAndKey", open, func(t *testing.T, e *env) {
			e.voyage("v1", func(v *domain.Voyage) { v.IdempotencyKey = "k" })
			for _, v := range []domain.Voyage{{ID: "v1", Title: "again", State: domain.VoyageOpen, CreatedAt: t0, UpdatedAt: t0},
				{ID: "v2", IdempotencyKey: "k", Title: "same key", State: domain.VoyageOpen, CreatedAt: t0, UpdatedAt: t0}} {
				err := e.s.Update(e.ctx, func(tx engine.Tx) error { return tx.VoyageInsert(e.ctx, &v) })
				require.ErrorIs(t, err, domain.ErrDuplicateID, v.ID)
			}
			require.Equal(t, "voyage v1", voyageGet(e, "v1").Title)
		})
	})

	group(t, "VoyageGet", func(t *testing.T) {
		run(t, "NotFound", open, func(t *testing.T, e *env) {
			e.view(func(r engine.Reader) error {
				_, err := r.VoyageGet(e.ctx, "nope")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
	})

	group(t, "VoyageByIdempotencyKey", func(t *testing.T) {
		run(t, "FindsByKey", open, func(t *testing.T, e *env) {
			e.voyage("v1", func(v *domain.Voyage) { v.IdempotencyKey = "k1" })
			e.voyage("v2")
			e.view(func(r engine.Reader) error {
				v, err := r.VoyageByIdempotencyKey(e.ctx, "k1")
				require.NoError(t, err)
				require.Equal(t, "v1", v.ID)
				_, err = r.VoyageByIdempotencyKey(e.ctx, "k2")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
	})

	group(t, "VoyageUpdate", func(t *testing.T) {
		run(t, "WritesWhenTheStateIsAsExpected", open, func(t *testing.T, e *env) {
			e.voyage("v1")
			want := fullVoyage(e, "v1")
			e.update(func(tx engine.Tx) error { return tx.VoyageUpdate(e.ctx, want, domain.VoyageOpen) })
			requireSameVoyage(t, *want, voyageGet(e, "v1"))
		})
		run(t, "GuardRefusesAnotherState", open, func(t *testing.T, e *env) {
			before := *e.voyage("v1")
			v := before
			v.State, v.Title = domain.VoyageCompleted, "stale"
			err := e.s.Update(e.ctx, func(tx engine.Tx) error { return tx.VoyageUpdate(e.ctx, &v, domain.VoyageActive) })
			require.ErrorIs(t, err, domain.ErrGuard)
			requireSameVoyage(t, before, voyageGet(e, "v1"))
			v.ID = "missing"
			err = e.s.Update(e.ctx, func(tx engine.Tx) error { return tx.VoyageUpdate(e.ctx, &v, domain.VoyageOpen) })
			require.ErrorIs(t, err, domain.ErrGuard)
		})
	})

	group(t, "VoyageList", func(t *testing.T) {
		run(t, "StatesAndLimit", open, func(t *testing.T, e *env) {
			e.voyage("v1")
			e.voyage("v2", func(v *domain.Voyage) { v.State = domain.VoyageActive })
			e.voyage("v3", func(v *domain.Voyage) { v.State = domain.VoyageCompleted })
			e.voyage("v4", func(v *domain.Voyage) { v.State = domain.VoyageBlocked })
			require.ElementsMatch(t, []string{"v1", "v2", "v3", "v4"}, voyageIDs(voyageList(e, nil, 0)))
			require.ElementsMatch(t, []string{"v1", "v2"}, voyageIDs(voyageList(e, []domain.VoyageState{domain.VoyageOpen, domain.VoyageActive}, 0)))
			require.Empty(t, voyageList(e, []domain.VoyageState{domain.VoyageCancelled}, 0))
			require.Len(t, voyageList(e, nil, 3), 3)
			require.Len(t, voyageList(e, []domain.VoyageState{domain.VoyageOpen, domain.VoyageActive, domain.VoyageBlocked}, 2), 2)
		})
		run(t, "DefaultLimit", open, func(t *testing.T, e *env) {
			vs := make([]*domain.Voyage, 0, 101)
			for i := range 101 {
				vs = append(vs, &domain.Voyage{ID: fmt.Sprintf("v%03d", i), Title: "v", State: domain.VoyageOpen, CreatedAt: t0, UpdatedAt: t0})
			}
			e.update(func(tx engine.Tx) error {
				for _, v := range vs {
					if err := tx.VoyageInsert(e.ctx, v); err != nil {
						return err
					}
				}
				return nil
			})
			require.Len(t, voyageList(e, nil, 0), 100)
			require.Len(t, voyageList(e, nil, 5000), 100)
		})
	})

	group(t, "VoyageMissions", func(t *testing.T) {
		run(t, "TheVoyagesMissionsOnly", open, func(t *testing.T, e *env) {
			e.voyage("v1")
			e.voyage("v2")
			e.add("a", inVoyage("v1"))
			e.add("b", inVoyage("v2"))
			e.add("c", inVoyage("v1"), inState(domain.StateCompleted))
			e.add("d")
			e.view(func(r engine.Reader) error {
				ms, err := r.VoyageMissions(e.ctx, "v1")
				require.NoError(t, err)
				require.ElementsMatch(t, []string{"a", "c"}, ids(ms))
				ms, err = r.VoyageMissions(e.ctx, "none")
				require.NoError(t, err)
				require.Empty(t, ms)
				return nil
			})
		})
	})

	group(t, "VoyageCounts", func(t *testing.T) {
		run(t, "FollowInsertAndUpdate", open, func(t *testing.T, e *env) {
			requireVoyageCounts(e, map[domain.VoyageState]int{})
			e.voyage("v1")
			e.voyage("v2")
			v := *e.voyage("v3")
			requireVoyageCounts(e, map[domain.VoyageState]int{domain.VoyageOpen: 3})
			v.State = domain.VoyageCompleted
			e.update(func(tx engine.Tx) error { return tx.VoyageUpdate(e.ctx, &v, domain.VoyageOpen) })
			requireVoyageCounts(e, map[domain.VoyageState]int{domain.VoyageOpen: 2, domain.VoyageCompleted: 1})
		})
	})

	group(t, "VoyageActiveOrder", func(t *testing.T) {
		// The pick order's voyage tiebreak follows the voyage's stored state: the store derives
		// it (the engine never copies it onto missions), whenever the voyage changes state and
		// for missions added to a live voyage. A live voyage is open (dispatched), active or
		// blocked — Armada's "active or in-progress voyage" (shared/cases/armada-scheduling.md)
		// — and among live voyages' missions the order is FIFO; a settled voyage's missions go
		// back among the standalone ones.
		run(t, "FollowsTheVoyageState", open, func(t *testing.T, e *env) {
			e.voyage("v1")
			e.voyage("v2")
			e.add("plain")
			e.add("in-v1", inVoyage("v1"))
			e.add("in-v2", inVoyage("v2"))
			e.add("urgent", withPriority(1))
			require.Equal(t, []string{"urgent", "in-v1", "in-v2", "plain"}, runnableOrder(e), "open voyages are live: before an older standalone mission")
			e.update(func(tx engine.Tx) error { return activateVoyage(e.ctx, tx, "v2") })
			require.Equal(t, []string{"urgent", "in-v1", "in-v2", "plain"}, runnableOrder(e), "open and active alike, FIFO between them")
			e.add("later-in-v2", inVoyage("v2"))
			require.Equal(t, []string{"urgent", "in-v1", "in-v2", "later-in-v2", "plain"}, runnableOrder(e))
			e.update(func(tx engine.Tx) error { return moveVoyage(e.ctx, tx, "v2", domain.VoyageBlocked) })
			require.Equal(t, []string{"urgent", "in-v1", "in-v2", "later-in-v2", "plain"}, runnableOrder(e), "a blocked voyage keeps its place")
			e.update(func(tx engine.Tx) error { return moveVoyage(e.ctx, tx, "v2", domain.VoyageCancelled) })
			require.Equal(t, []string{"urgent", "in-v1", "plain", "in-v2", "later-in-v2"}, runnableOrder(e), "a settled voyage does not")
			e.update(func(tx engine.Tx) error { return activateVoyage(e.ctx, tx, "v1") })
			require.Equal(t, "urgent", acquire(e, engine.AcquireQuery{}).ID)
			require.Equal(t, "in-v1", acquire(e, engine.AcquireQuery{}).ID)
		})
	})
}

func fullVoyage(e *env, id string) *domain.Voyage {
	at := e.next()
	return &domain.Voyage{ID: id, IdempotencyKey: "idem-" + id, Title: "full " + id, Goal: "ship ü", Repository: "/repo",
		TargetBranch: "main", State: domain.VoyageActive, CostLimitUSD: 9.5, TokenLimit: 120_000,
		Usage: domain.Usage{InputTokens: 7, OutputTokens: 8, CostUSD: 0.5}, RequirementsChanged: true,
		EscalationID: "esc-" + id, CreatedAt: at, UpdatedAt: at.Add(time.Second), SettledAt: at.Add(2 * time.Second)}
}

func requireSameVoyage(t *testing.T, want, got domain.Voyage) {
	t.Helper()
	for _, v := range []*domain.Voyage{&want, &got} {
		v.CreatedAt, v.UpdatedAt, v.SettledAt = normTime(v.CreatedAt), normTime(v.UpdatedAt), normTime(v.SettledAt)
	}
	require.Equal(t, want, got)
}

func voyageGet(e *env, id string) domain.Voyage {
	e.t.Helper()
	var v domain.Voyage
	e.view(func(r engine.Reader) error {
		var err error
		v, err = r.VoyageGet(e.ctx, id)
		return err
	})
	return v
}

func voyageList(e *env, states []domain.VoyageState, limit int) []domain.Voyage {
	e.t.Helper()
	var out []domain.Voyage
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.VoyageList(e.ctx, states, limit)
		return err
	})
	return out
}

func voyageIDs(vs []domain.Voyage) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.ID)
	}
	return out
}

func requireVoyageCounts(e *env, want map[domain.VoyageState]int) {
	e.t.Helper()
	e.view(func(r engine.Reader) error {
		c, err := r.VoyageCounts(e.ctx)
		require.NoError(e.t, err)
		require.Equal(e.t, want, nonZero(c))
		return nil
	})
}

// runnableOrder returns the ids MissionsRunnableOrder gives.
func runnableOrder(e *env) []string {
	e.t.Helper()
	var out []domain.Mission
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.MissionsRunnableOrder(e.ctx, 1000)
		return err
	})
	return ids(out)
}

// activateVoyage moves a voyage to active, as the engine does at its first acquire.
func activateVoyage(ctx context.Context, tx engine.Tx, id string) error {
	return moveVoyage(ctx, tx, id, domain.VoyageActive)
}

// moveVoyage writes a voyage's new state, guarded by the state it had.
func moveVoyage(ctx context.Context, tx engine.Tx, id string, to domain.VoyageState) error {
	v, err := tx.VoyageGet(ctx, id)
	if err != nil {
		return err
	}
	from := v.State
	v.State = to
	return tx.VoyageUpdate(ctx, &v, from)
}
