package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// The landing table names only real states, lists each (from, to) once, and reaches every
// state from none.
func TestLandingTable_WellFormed(t *testing.T) {
	t.Parallel()
	seen := map[[2]engine.LandingState]bool{}
	reached := map[engine.LandingState]bool{engine.LandingNone: true}
	for _, tr := range engine.LandingTransitions() {
		require.True(t, tr.From.Valid() && tr.To.Valid(), "%v", tr)
		require.NotEmpty(t, tr.Ops, "%v", tr)
		k := [2]engine.LandingState{tr.From, tr.To}
		require.False(t, seen[k], "%s → %s listed twice", tr.From, tr.To)
		seen[k] = true
	}
	for changed := true; changed; {
		changed = false
		for _, tr := range engine.LandingTransitions() {
			if reached[tr.From] && !reached[tr.To] {
				reached[tr.To], changed = true, true
			}
		}
	}
	for _, s := range engine.AllLandingStates() {
		require.True(t, reached[s], "%s is unreachable", s)
	}
	require.False(t, engine.LandingState("merged").Valid())
	for _, s := range engine.AllLandingStates() {
		lands := slices.ContainsFunc(engine.LandingTransitions(), func(tr engine.LandingTransition) bool {
			return tr.From == s && slices.Contains(tr.Ops, engine.LandOpLand)
		})
		require.Equal(t, lands, s.Queued(), "%s: the landing queue works on exactly the states a landing starts from", s)
	}
}

// landingIn makes a completed mission whose landing is s (through legal operations only).
func (b *bundle) landingIn(s engine.LandingState) engine.Mission {
	b.t.Helper()
	m := b.inState(engine.StateCompleted)
	record := func(to engine.LandingState) {
		_, err := b.e.RecordLanding(b.ctx, engine.Landing{MissionID: m.ID, Attempt: m.Attempt, Status: "test"}, to)
		require.NoError(b.t, err)
	}
	var err error
	switch s {
	case engine.LandingPending:
	case engine.LandingReview:
		_, err = b.e.AwaitReview(b.ctx, m.ID, "m-review")
	case engine.LandingApproval:
		_, err = b.e.AwaitApproval(b.ctx, m.ID, "policy approval")
	case engine.LandingApproved:
		_, err = b.e.AwaitApproval(b.ctx, m.ID, "policy approval")
		require.NoError(b.t, err)
		_, err = b.e.ApproveLanding(b.ctx, m.ID, "ok", "test")
	case engine.LandingRepair:
		_, err = b.e.RepairLanding(b.ctx, m.ID, "m-repair", "review asked for changes")
	case engine.LandingLeft:
		_, err = b.e.LeaveLanding(b.ctx, m.ID, "policy none")
	case engine.LandingWaiting, engine.LandingConflicted, engine.LandingLanded, engine.LandingNotRequired:
		record(s)
	default:
		b.t.Fatalf("no path to landing %s", s)
	}
	require.NoError(b.t, err)
	m = b.get(m.ID)
	require.Equal(b.t, s, m.Landing)
	return m
}

// landedRepair makes a landed repair mission about subject.
func (b *bundle) landedRepair(subject string) engine.Mission {
	b.t.Helper()
	b.n++
	r := b.create(engine.MissionSpec{Kind: engine.KindRepair, SubjectID: subject, WriteArea: []string{fmt.Sprintf("area%d/**", b.n)}})
	r = b.acquire(r.ID, true)
	_, err := b.e.Complete(b.ctx, r.Fence(), engine.WorkerResult{Summary: "repaired"})
	require.NoError(b.t, err)
	_, err = b.e.RecordLanding(b.ctx, engine.Landing{MissionID: r.ID, Attempt: r.Attempt, Status: "landed"}, engine.LandingLanded)
	require.NoError(b.t, err)
	return b.get(r.ID)
}

// Every typed landing operation, tried from every landing state of a completed mission, does
// what the table says: the move when the table has it, nothing when asked in the state it
// leads to, and otherwise an error that names the states, changing nothing. The event log
// replays every landing state.
func TestLanding_TypedOperationsFollowTheTable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	type opCase struct {
		op  engine.LandingOp
		to  engine.LandingState
		run func(m engine.Mission) error
	}
	ops := []opCase{
		{engine.LandOpReview, engine.LandingReview, func(m engine.Mission) error { _, err := b.e.AwaitReview(b.ctx, m.ID, "m-r"); return err }},
		{engine.LandOpAskApproval, engine.LandingApproval, func(m engine.Mission) error { _, err := b.e.AwaitApproval(b.ctx, m.ID, "why"); return err }},
		{engine.LandOpApprove, engine.LandingApproved, func(m engine.Mission) error {
			_, err := b.e.ApproveLanding(b.ctx, m.ID, "", "test")
			return err
		}},
		{engine.LandOpLeave, engine.LandingLeft, func(m engine.Mission) error { _, err := b.e.LeaveLanding(b.ctx, m.ID, "none"); return err }},
		{engine.LandOpRepair, engine.LandingRepair, func(m engine.Mission) error {
			_, err := b.e.RepairLanding(b.ctx, m.ID, "m-x", "why")
			return err
		}},
		{engine.LandOpCarry, engine.LandingLanded, func(m engine.Mission) error {
			_, err := b.e.CarryLanding(b.ctx, m.ID, b.landedRepair(m.ID).ID)
			return err
		}},
	}
	for _, to := range []engine.LandingState{engine.LandingLanded, engine.LandingNotRequired, engine.LandingWaiting, engine.LandingConflicted, engine.LandingRepair} {
		ops = append(ops, opCase{engine.LandOpLand, to, func(m engine.Mission) error {
			_, err := b.e.RecordLanding(b.ctx, engine.Landing{MissionID: m.ID, Attempt: m.Attempt, Status: "test"}, to)
			return err
		}})
	}
	for _, from := range engine.AllLandingStates() {
		if from == engine.LandingNone {
			continue // a mission not completed: below
		}
		for _, oc := range ops {
			m := b.landingIn(from)
			what := fmt.Sprintf("%s → %s by %s", from, oc.to, oc.op)
			err := oc.run(m)
			noop := from == oc.to && oc.op != engine.LandOpApprove && !(oc.op == engine.LandOpLand && from == engine.LandingWaiting)
			switch {
			case engine.CanLand(from, oc.to, oc.op):
				require.NoError(t, err, what)
				require.Equal(t, oc.to, b.get(m.ID).Landing, what)
			case noop || (oc.op == engine.LandOpCarry && from.Satisfies()):
				require.NoError(t, err, what)
				require.Equal(t, from, b.get(m.ID).Landing, what)
			default:
				require.Error(t, err, what)
				require.True(t, engine.CallerError(err), "%s: %v", what, err)
				require.Equal(t, m, b.get(m.ID), "%s: a refused operation changed the mission", what)
				if oc.op != engine.LandOpApprove {
					var lt *engine.LandingTransitionError
					require.True(t, errors.As(err, &lt), "%s: %v", what, err)
					require.ErrorIs(t, err, engine.ErrIllegalTransition)
					require.Contains(t, err.Error(), string(from), what)
					require.Contains(t, err.Error(), string(oc.op), what)
				}
			}
		}
	}
	// A mission that is not completed has no landing to move.
	running := b.inState(engine.StateRunning)
	for _, oc := range ops {
		if oc.op == engine.LandOpCarry {
			continue // its carrier check comes first; the repair is about a mission not landed
		}
		err := oc.run(running)
		require.Error(t, err, "%s while running", oc.op)
		if oc.op != engine.LandOpApprove {
			require.ErrorIs(t, err, engine.ErrIllegalTransition)
		}
	}
	b.verifyReplay()
}

// CarryLanding checks its carrier: a landed repair mission about the mission it lands.
func TestLanding_CarryNeedsTheLandedRepairOfTheMission(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.landingIn(engine.LandingRepair)
	other := b.landingIn(engine.LandingRepair)
	wrong := b.landedRepair(other.ID)
	_, err := b.e.CarryLanding(b.ctx, m.ID, wrong.ID)
	require.ErrorIs(t, err, engine.ErrInvalid)
	require.Contains(t, err.Error(), "carrier_id")
	b.n++
	pending := b.create(engine.MissionSpec{Kind: engine.KindRepair, SubjectID: m.ID, WriteArea: []string{fmt.Sprintf("area%d/**", b.n)}})
	_, err = b.e.CarryLanding(b.ctx, m.ID, pending.ID)
	require.ErrorIs(t, err, engine.ErrInvalid, "a repair that has not landed carries nothing yet")
	require.Equal(t, engine.LandingRepair, b.get(m.ID).Landing)
	got, err := b.e.CarryLanding(b.ctx, m.ID, b.landedRepair(m.ID).ID)
	require.NoError(t, err)
	require.Equal(t, engine.LandingLanded, got.Landing)
	evs, err := b.e.Events(b.ctx, engine.EventFilter{MissionID: m.ID, Types: []string{"landing.state"}, Limit: 10})
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(evs, func(e engine.Event) bool { return e.Actor == "scheduler" }), "%v", evs)
}
