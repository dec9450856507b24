package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The landing table names only real states, lists each (from, to) once, and reaches every
// state from none.
func TestLandingTable_WellFormed(t *testing.T) {
	t.Parallel()
	seen := map[[2]domain.LandingState]bool{}
	reached := map[domain.LandingState]bool{domain.LandingNone: true}
	for _, tr := range domain.LandingTransitions() {
		require.True(t, tr.From.Valid() && tr.To.Valid(), "%v", tr)
		require.NotEmpty(t, tr.Ops, "%v", tr)
		k := [2]domain.LandingState{tr.From, tr.To}
		require.False(t, seen[k], "%s → %s listed twice", tr.From, tr.To)
		seen[k] = true
	}
	for changed := true; changed; {
		changed = false
		for _, tr := range domain.LandingTransitions() {
			if reached[tr.From] && !reached[tr.To] {
				reached[tr.To], changed = true, true
			}
		}
	}
	for _, s := range domain.AllLandingStates() {
		require.True(t, reached[s], "%s is unreachable", s)
	}
	require.False(t, domain.LandingState("merged").Valid())
	for _, s := range domain.AllLandingStates() {
		lands := slices.ContainsFunc(domain.LandingTransitions(), func(tr domain.LandingTransition) bool {
			return tr.From == s && slices.Contains(tr.Ops, domain.LandOpLand)
		})
		require.Equal(t, lands, s.Queued(), "%s: the landing queue works on exactly the states a landing starts from", s)
	}
}

// landingIn makes a completed mission whose landing is s (through legal operations only).
func (b *bundle) landingIn(s domain.LandingState) domain.Mission {
	b.t.Helper()
	m := b.inState(domain.StateCompleted)
	record := func(to domain.LandingState) {
		_, err := b.e.RecordLanding(b.ctx, domain.Landing{MissionID: m.ID, Attempt: m.Attempt, Status: "test"}, to)
		require.NoError(b.t, err)
	}
	var err error
	switch s {
	case domain.LandingPending:
	case domain.LandingReview:
		_, err = b.e.AwaitReview(b.ctx, m.ID, "m-review")
	case domain.LandingApproval:
		_, err = b.e.AwaitApproval(b.ctx, m.ID, "policy approval")
	case domain.LandingApproved:
		_, err = b.e.AwaitApproval(b.ctx, m.ID, "policy approval")
		require.NoError(b.t, err)
		_, err = b.e.ApproveLanding(b.ctx, m.ID, "ok", "test")
	case domain.LandingRepair:
		_, err = b.e.RepairLanding(b.ctx, m.ID, "m-repair", "review asked for changes")
	case domain.LandingLeft:
		_, err = b.e.LeaveLanding(b.ctx, m.ID, "policy none")
	case domain.LandingWaiting, domain.LandingConflicted, domain.LandingLanded, domain.LandingNotRequired:
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
func (b *bundle) landedRepair(subject string) domain.Mission {
	b.t.Helper()
	b.n++
	r := b.create(engine.MissionSpec{Kind: domain.KindRepair, SubjectID: subject, WriteArea: []string{fmt.Sprintf("area%d/**", b.n)}})
	r = b.acquire(r.ID, true)
	_, err := b.e.Complete(b.ctx, r.Fence(), domain.WorkerResult{Summary: "repaired"})
	require.NoError(b.t, err)
	_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: r.ID, Attempt: r.Attempt, Status: "landed"}, domain.LandingLanded)
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
		op  domain.LandingOp
		to  domain.LandingState
		run func(m domain.Mission) error
	}
	ops := []opCase{
		{domain.LandOpReview, domain.LandingReview, func(m domain.Mission) error { _, err := b.e.AwaitReview(b.ctx, m.ID, "m-r"); return err }},
		{domain.LandOpAskApproval, domain.LandingApproval, func(m domain.Mission) error { _, err := b.e.AwaitApproval(b.ctx, m.ID, "why"); return err }},
		{domain.LandOpApprove, domain.LandingApproved, func(m domain.Mission) error {
			_, err := b.e.ApproveLanding(b.ctx, m.ID, "", "test")
			return err
		}},
		{domain.LandOpLeave, domain.LandingLeft, func(m domain.Mission) error { _, err := b.e.LeaveLanding(b.ctx, m.ID, "none"); return err }},
		{domain.LandOpRepair, domain.LandingRepair, func(m domain.Mission) error {
			_, err := b.e.RepairLanding(b.ctx, m.ID, "m-x", "why")
			return err
		}},
		{domain.LandOpCarry, domain.LandingLanded, func(m domain.Mission) error {
			_, err := b.e.CarryLanding(b.ctx, m.ID, b.landedRepair(m.ID).ID)
			return err
		}},
	}
	for _, to := range []domain.LandingState{domain.LandingLanded, domain.LandingNotRequired, domain.LandingWaiting, domain.LandingConflicted, domain.LandingRepair} {
		ops = append(ops, opCase{domain.LandOpLand, to, func(m domain.Mission) error {
			_, err := b.e.RecordLanding(b.ctx, domain.Landing{MissionID: m.ID, Attempt: m.Attempt, Status: "test"}, to)
			return err
		}})
	}
	for _, from := range domain.AllLandingStates() {
		if from == domain.LandingNone {
			continue // a mission not completed: below
		}
		for _, oc := range ops {
			m := b.landingIn(from)
			what := fmt.Sprintf("%s → %s by %s", from, oc.to, oc.op)
			err := oc.run(m)
			noop := from == oc.to && oc.op != domain.LandOpApprove && !(oc.op == domain.LandOpLand && from == domain.LandingWaiting)
			switch {
			case domain.CanLand(from, oc.to, oc.op):
				require.NoError(t, err, what)
				require.Equal(t, oc.to, b.get(m.ID).Landing, what)
			case noop || (oc.op == domain.LandOpCarry && from.Satisfies()):
				require.NoError(t, err, what)
				require.Equal(t, from, b.get(m.ID).Landing, what)
			default:
				require.Error(t, err, what)
				require.True(t, domain.CallerError(err), "%s: %v", what, err)
				require.Equal(t, m, b.get(m.ID), "%s: a refused operation changed the mission", what)
				if oc.op != domain.LandOpApprove {
					var lt *domain.LandingTransitionError
					require.True(t, errors.As(err, &lt), "%s: %v", what, err)
					require.ErrorIs(t, err, domain.ErrIllegalTransition)
					require.Contains(t, err.Error(), string(from), what)
					require.Contains(t, err.Error(), string(oc.op), what)
				}
			}
		}
	}
	// A mission that is not completed has no landing to move.
	running := b.inState(domain.StateRunning)
	for _, oc := range ops {
		if oc.op == domain.LandOpCarry {
			continue // its carrier check comes first; the repair is about a mission not landed
		}
		err := oc.run(running)
		require.Error(t, err, "%s while running", oc.op)
		if oc.op != domain.LandOpApprove {
			require.ErrorIs(t, err, domain.ErrIllegalTransition)
		}
	}
	b.verifyReplay()
}

// CarryLanding checks its carrier: a landed repair mission about the mission it lands.
func TestLanding_CarryNeedsTheLandedRepairOfTheMission(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.landingIn(domain.LandingRepair)
	other := b.landingIn(domain.LandingRepair)
	wrong := b.landedRepair(other.ID)
	_, err := b.e.CarryLanding(b.ctx, m.ID, wrong.ID)
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.Contains(t, err.Error(), "carrier_id")
	b.n++
	pending := b.create(engine.MissionSpec{Kind: domain.KindRepair, SubjectID: m.ID, WriteArea: []string{fmt.Sprintf("area%d/**", b.n)}})
	_, err = b.e.CarryLanding(b.ctx, m.ID, pending.ID)
	require.ErrorIs(t, err, domain.ErrInvalid, "a repair that has not landed carries nothing yet")
	require.Equal(t, domain.LandingRepair, b.get(m.ID).Landing)
	got, err := b.e.CarryLanding(b.ctx, m.ID, b.landedRepair(m.ID).ID)
	require.NoError(t, err)
	require.Equal(t, domain.LandingLanded, got.Landing)
	evs, err := b.e.Events(b.ctx, engine.EventFilter{MissionID: m.ID, Types: []string{"landing.state"}, Limit: 10})
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(evs, func(e domain.Event) bool { return e.Actor == "scheduler" }), "%v", evs)
}
