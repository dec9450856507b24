package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseHolds covers HoldUpsert, HoldDelete, HoldGet, HoldList and HoldCounts.
func exerciseHolds(t *testing.T, open Opener) {
	group(t, "HoldUpsert", func(t *testing.T) {
		run(t, "InsertsThenReplaces", open, func(t *testing.T, e *env) {
			e.add("m1")
			h := &engine.Hold{MissionID: "m1", Reason: engine.Reason{Code: engine.WhyBackoff, Message: "backing off",
				MissionID: "m0", Until: e.next().Add(time.Minute), Since: e.next()}, UpdatedAt: e.next()}
			e.update(func(tx engine.Tx) error { return tx.HoldUpsert(e.ctx, h) })
			requireSameHold(t, *h, holdGet(e, "m1"))
			h2 := &engine.Hold{MissionID: "m1", Reason: engine.Reason{Code: engine.WhyConflict, Message: "conflict", Since: e.next()}, UpdatedAt: e.next()}
			e.update(func(tx engine.Tx) error { return tx.HoldUpsert(e.ctx, h2) })
			requireSameHold(t, *h2, holdGet(e, "m1"))
			require.Len(t, holdList(e), 1)
		})
		// The planner decides on a snapshot; history pruning may remove a mission before its
		// hold is written: that hold is dropped and the rest of the step goes on.
		run(t, "MissionGoneIsNoError", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.update(func(tx engine.Tx) error {
				if err := tx.HoldUpsert(e.ctx, &engine.Hold{MissionID: "gone", Reason: engine.Reason{Code: engine.WhyQueued}, UpdatedAt: e.next()}); err != nil {
					return err
				}
				return tx.HoldUpsert(e.ctx, &engine.Hold{MissionID: "m1", Reason: engine.Reason{Code: engine.WhyQueued}, UpdatedAt: e.next()})
			})
			got := holdList(e)
			require.Len(t, got, 1)
			require.Equal(t, "m1", got[0].MissionID)
		})
	})

	group(t, "HoldGet", func(t *testing.T) {
		run(t, "NotHeld", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.view(func(r engine.Reader) error {
				_, err := r.HoldGet(e.ctx, "m1")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
	})

	group(t, "HoldDelete", func(t *testing.T) {
		run(t, "RemovesAndIgnoresAbsent", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.add("m2")
			hold(e, "m1", engine.WhyQueued)
			hold(e, "m2", engine.WhyQueued)
			e.update(func(tx engine.Tx) error {
				if err := tx.HoldDelete(e.ctx, "m1"); err != nil {
					return err
				}
				return tx.HoldDelete(e.ctx, "m1") // not held: no error
			})
			var got []string
			for _, h := range holdList(e) {
				got = append(got, h.MissionID)
			}
			require.Equal(t, []string{"m2"}, got)
		})
	})

	group(t, "HoldCounts", func(t *testing.T) {
		run(t, "OnlyMissionsStillWaiting", open, func(t *testing.T, e *env) {
			e.add("p1")
			e.add("p2")
			e.add("i1", inState(domain.StateInterrupted))
			e.add("r1", inState(domain.StateRunning))
			e.add("c1", inState(domain.StateCompleted))
			hold(e, "p1", engine.WhyConflict)
			hold(e, "p2", engine.WhyBackoff)
			hold(e, "i1", engine.WhyConflict)
			hold(e, "r1", engine.WhyConflict)
			hold(e, "c1", engine.WhyBackoff)
			e.view(func(r engine.Reader) error {
				c, err := r.HoldCounts(e.ctx)
				require.NoError(t, err)
				require.Equal(t, map[string]int{engine.WhyConflict: 2, engine.WhyBackoff: 1}, nonZero(c))
				return nil
			})
			require.Len(t, holdList(e), 5, "HoldList returns every recorded hold")
		})
		run(t, "CountsLandingsStillWaiting", open, func(t *testing.T, e *env) {
			waits := map[domain.LandingState]string{domain.LandingPending: domain.LandWaitTargetBusy, domain.LandingReview: domain.LandWaitReview,
				domain.LandingApproved: domain.LandWaitTargetBusy, domain.LandingWaiting: domain.LandWaitCheckout,
				domain.LandingApproval: domain.LandWaitApproval, domain.LandingRepair: domain.LandWaitRepair,
				domain.LandingLanded: domain.LandWaitQueued, domain.LandingNotRequired: domain.LandWaitQueued,
				domain.LandingLeft: domain.LandWaitQueued, domain.LandingConflicted: domain.LandWaitQueued}
			for l, code := range waits {
				id := "c-" + string(l)
				e.add(id, inState(domain.StateCompleted), func(m *domain.Mission) { m.Landing = l })
				hold(e, id, code)
			}
			e.view(func(r engine.Reader) error {
				c, err := r.HoldCounts(e.ctx)
				require.NoError(t, err)
				require.Equal(t, map[string]int{domain.LandWaitTargetBusy: 2, domain.LandWaitReview: 1, domain.LandWaitCheckout: 1,
					domain.LandWaitApproval: 1, domain.LandWaitRepair: 1}, nonZero(c),
					"a completed mission counts while its landing waits (not once landed, left or conflicted)")
				return nil
			})
		})
	})
}

func hold(e *env, id, code string) {
	e.t.Helper()
	e.update(func(tx engine.Tx) error {
		return tx.HoldUpsert(e.ctx, &engine.Hold{MissionID: id, Reason: engine.Reason{Code: code, Message: code, Since: t0}, UpdatedAt: t0})
	})
}

func holdGet(e *env, id string) engine.Hold {
	e.t.Helper()
	var h engine.Hold
	e.view(func(r engine.Reader) error {
		var err error
		h, err = r.HoldGet(e.ctx, id)
		return err
	})
	return h
}

func holdList(e *env) []engine.Hold {
	e.t.Helper()
	var out []engine.Hold
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.HoldList(e.ctx)
		return err
	})
	return out
}

func requireSameHold(t *testing.T, want, got engine.Hold) {
	t.Helper()
	for _, h := range []*engine.Hold{&want, &got} {
		h.UpdatedAt, h.Reason.Until, h.Reason.Since = normTime(h.UpdatedAt), normTime(h.Reason.Until), normTime(h.Reason.Since)
	}
	require.Equal(t, want, got)
}
