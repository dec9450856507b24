package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseEscalations covers EscalationInsert, EscalationUpdate, EscalationGet,
// EscalationList and EscalationCount.
func exerciseEscalations(t *testing.T, open Opener) {
	group(t, "EscalationInsert", func(t *testing.T) {
		run(t, "RoundTripsEveryField", open, func(t *testing.T, e *env) {
			e.voyage("v")
			x := fullEscalation(e, "x1")
			e.update(func(tx engine.Tx) error { return tx.EscalationInsert(e.ctx, x) })
			requireSameEscalation(t, *x, escalationGet(e, "x1"))
		})
		run(t, "DuplicateID", open, func(t *testing.T, e *env) {
			e.escalation("x1")
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				return tx.EscalationInsert(e.ctx, &domain.Escalation{ID: "x1", Route: domain.RoutePerson, Kind: "k", State: domain.EscalationOpen, CreatedAt: t0})
			})
			require.ErrorIs(t, err, domain.ErrDuplicateID)
		})
		// EscalateOnce's key: one open escalation per key, any number without one, and a
		// resolved escalation frees its key.
		run(t, "OneOpenPerOnceKey", open, func(t *testing.T, e *env) {
			withKey := func(k string) func(*domain.Escalation) { return func(x *domain.Escalation) { x.OnceKey = k } }
			first := e.escalation("x1", withKey("checkout:m1"))
			e.escalation("x2")
			e.escalation("x3")
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				return tx.EscalationInsert(e.ctx, &domain.Escalation{ID: "x4", MissionIDs: []string{}, Route: domain.RoutePerson,
					Kind: "checkout", State: domain.EscalationOpen, CreatedAt: e.next(), OnceKey: "checkout:m1"})
			})
			require.ErrorIs(t, err, domain.ErrDuplicateID, "a second open escalation with the same key")
			open := engine.EscalationFilter{State: domain.EscalationOpen, OnceKey: "checkout:m1", Limit: 10}
			require.Equal(t, []string{"x1"}, escalationIDs(escalationList(e, open)))
			require.Empty(t, escalationList(e, engine.EscalationFilter{OnceKey: "checkout:m9", Limit: 10}))
			first.State, first.Resolution, first.ResolvedAt = domain.EscalationResolved, "done", e.next()
			e.update(func(tx engine.Tx) error { return tx.EscalationUpdate(e.ctx, first) })
			require.Empty(t, escalationList(e, open))
			e.escalation("x5", withKey("checkout:m1"))
			require.Equal(t, []string{"x5"}, escalationIDs(escalationList(e, open)))
		})
	})

	group(t, "EscalationGet", func(t *testing.T) {
		run(t, "NotFound", open, func(t *testing.T, e *env) {
			e.view(func(r engine.Reader) error {
				_, err := r.EscalationGet(e.ctx, "nope")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
	})

	group(t, "EscalationUpdate", func(t *testing.T) {
		run(t, "ResolvesAndRewrites", open, func(t *testing.T, e *env) {
			x := e.escalation("x1")
			x.State, x.Resolution, x.ResolvedBy, x.ResolvedAt = domain.EscalationResolved, "retry", "person", e.next()
			x.MissionIDs, x.Evidence = []string{"m9"}, []string{"log"}
			e.update(func(tx engine.Tx) error { return tx.EscalationUpdate(e.ctx, x) })
			requireSameEscalation(t, *x, escalationGet(e, "x1"))
		})
		run(t, "NotStored", open, func(t *testing.T, e *env) {
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				return tx.EscalationUpdate(e.ctx, &domain.Escalation{ID: "missing", State: domain.EscalationResolved})
			})
			require.Error(t, err)
			require.True(t, isAny(err, domain.ErrGuard, domain.ErrNotFound), "got %v", err)
		})
	})

	group(t, "EscalationList", func(t *testing.T) {
		run(t, "Filters", open, func(t *testing.T, e *env) {
			e.voyage("v")
			e.escalation("a", func(x *domain.Escalation) { x.MissionIDs, x.VoyageID = []string{"m1", "m2"}, "v" })
			e.escalation("b", func(x *domain.Escalation) { x.MissionIDs, x.Route = []string{"m2"}, domain.RouteArchitect })
			e.escalation("c", func(x *domain.Escalation) {
				x.MissionIDs, x.CauseID, x.State = []string{"m3"}, "m1", domain.EscalationResolved
			})
			e.escalation("d", func(x *domain.Escalation) { x.VoyageID, x.CauseID = "v", "m1" })
			for name, c := range map[string]struct {
				f    engine.EscalationFilter
				want []string
			}{
				"all":            {engine.EscalationFilter{}, []string{"a", "b", "c", "d"}},
				"open":           {engine.EscalationFilter{State: domain.EscalationOpen}, []string{"a", "b", "d"}},
				"resolved":       {engine.EscalationFilter{State: domain.EscalationResolved}, []string{"c"}},
				"voyage":         {engine.EscalationFilter{VoyageID: "v"}, []string{"a", "d"}},
				"mission":        {engine.EscalationFilter{MissionID: "m2"}, []string{"a", "b"}},
				"mission+route":  {engine.EscalationFilter{MissionID: "m2", Route: domain.RouteArchitect}, []string{"b"}},
				"route":          {engine.EscalationFilter{Route: domain.RoutePerson}, []string{"a", "c", "d"}},
				"cause":          {engine.EscalationFilter{CauseID: "m1"}, []string{"c", "d"}},
				"cause+open":     {engine.EscalationFilter{CauseID: "m1", State: domain.EscalationOpen}, []string{"d"}},
				"mission prefix": {engine.EscalationFilter{MissionID: "m"}, nil},
				"nothing":        {engine.EscalationFilter{VoyageID: "w"}, nil},
			} {
				require.ElementsMatch(t, c.want, escalationIDs(escalationList(e, c.f)), name)
			}
			require.Len(t, escalationList(e, engine.EscalationFilter{Limit: 2}), 2)
		})
		run(t, "DefaultLimit", open, func(t *testing.T, e *env) {
			for i := range 101 {
				e.escalation(fmt.Sprintf("x%03d", i))
			}
			require.Len(t, escalationList(e, engine.EscalationFilter{}), 100)
			require.Len(t, escalationList(e, engine.EscalationFilter{Limit: 101}), 101)
		})
	})

	group(t, "EscalationCount", func(t *testing.T) {
		run(t, "PerState", open, func(t *testing.T, e *env) {
			e.escalation("a")
			e.escalation("b")
			e.escalation("c", func(x *domain.Escalation) { x.State = domain.EscalationResolved })
			e.view(func(r engine.Reader) error {
				for state, want := range map[string]int{domain.EscalationOpen: 2, domain.EscalationResolved: 1, "other": 0} {
					n, err := r.EscalationCount(e.ctx, state)
					require.NoError(t, err)
					require.Equal(t, want, n, state)
				}
				return nil
			})
		})
	})
}

// escalation stores an open escalation routed to a person.
func (e *env) escalation(id string, mods ...func(*domain.Escalation)) *domain.Escalation {
	e.t.Helper()
	x := &domain.Escalation{ID: id, MissionIDs: []string{}, Route: domain.RoutePerson, Kind: "decision", Reason: "why " + id,
		DecisionRequired: "decide", State: domain.EscalationOpen, CreatedAt: e.next()}
	for _, mod := range mods {
		mod(x)
	}
	e.update(func(tx engine.Tx) error { return tx.EscalationInsert(e.ctx, x) })
	return x
}

func fullEscalation(e *env, id string) *domain.Escalation {
	at := e.next()
	return &domain.Escalation{ID: id, MissionIDs: []string{"m1", "m2"}, VoyageID: "v", Route: domain.RouteArchitect,
		Kind: "conflict", CauseID: "m0", Reason: "two ways", DecisionRequired: "pick one", Evidence: []string{"a", "b"},
		SafeNextStep: "wait", State: domain.EscalationResolved, Resolution: "first", ResolvedBy: "main_agent",
		CreatedAt: at, ResolvedAt: at.Add(time.Minute)}
}

func requireSameEscalation(t *testing.T, want, got domain.Escalation) {
	t.Helper()
	for _, x := range []*domain.Escalation{&want, &got} {
		x.CreatedAt, x.ResolvedAt = normTime(x.CreatedAt), normTime(x.ResolvedAt)
		if len(x.MissionIDs) == 0 {
			x.MissionIDs = nil
		}
	}
	require.Equal(t, want, got)
}

func escalationGet(e *env, id string) domain.Escalation {
	e.t.Helper()
	var x domain.Escalation
	e.view(func(r engine.Reader) error {
		var err error
		x, err = r.EscalationGet(e.ctx, id)
		return err
	})
	return x
}

func escalationList(e *env, f engine.EscalationFilter) []domain.Escalation {
	e.t.Helper()
	var out []domain.Escalation
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.EscalationList(e.ctx, f)
		return err
	})
	return out
}

func escalationIDs(xs []domain.Escalation) []string {
	var out []string
	for _, x := range xs {
		out = append(out, x.ID)
	}
	return out
}
