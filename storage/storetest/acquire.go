package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseAcquire covers MissionAcquire (design brief §3: the runnable rules, the agent's
// filters and the pick order) and MissionsRunnableOrder.
func exerciseAcquire(t *testing.T, open Opener) {
	group(t, "MissionAcquire", func(t *testing.T) {
		run(t, "NoWorkWhenEmpty", open, func(t *testing.T, e *env) {
			requireNoWork(e, engine.AcquireQuery{})
		})
		run(t, "LeasesAndCountsTheAttempt", open, func(t *testing.T, e *env) {
			e.add("m1", func(m *domain.Mission) {
				m.State, m.Attempt, m.Lease.Epoch, m.Contacted, m.Preempt = domain.StateInterrupted, 2, 5, true, true
				m.FinishedAt = t0
			})
			now := t0.Add(time.Hour)
			m := acquire(e, engine.AcquireQuery{Now: now, Owner: "agent-1", Profile: "claude", LeaseTTL: 30 * time.Second})
			require.Equal(t, "m1", m.ID)
			require.Equal(t, domain.StateLeased, m.State)
			require.Equal(t, int64(6), m.Lease.Epoch)
			require.Equal(t, 3, m.Attempt)
			require.Equal(t, "agent-1", m.Lease.Owner)
			require.True(t, m.Lease.ExpiresAt.Equal(now.Add(30*time.Second)), "expires at %v", m.Lease.ExpiresAt)
			require.Equal(t, "claude", m.Profile)
			require.False(t, m.Contacted)
			require.False(t, m.Preempt)
			require.True(t, m.StartedAt.IsZero() && m.FinishedAt.IsZero())
			requireSameMission(t, m, e.get("m1"))
			requireCounts(e, map[domain.MissionState]int{domain.StateLeased: 1})
		})
		run(t, "RecordsTheNodeAndKeepsItAfterTheLease", open, func(t *testing.T, e *env) {
			e.add("m1")
			m := acquire(e, engine.AcquireQuery{Now: t0.Add(time.Hour), Owner: "claude", LeaseTTL: time.Minute, Node: "node-b"})
			require.Equal(t, "node-b", m.Node)
			requireSameMission(t, m, e.get("m1"))
			e.set("m1", func(m *domain.Mission) {
				m.State, m.Lease.Owner, m.Lease.ExpiresAt = domain.StatePending, "", time.Time{}
			})
			require.Equal(t, "node-b", e.get("m1").Node, "the node stays with the attempt it ran")
			m = acquire(e, engine.AcquireQuery{Now: t0.Add(2 * time.Hour), Owner: "claude", LeaseTTL: time.Minute})
			require.Empty(t, m.Node, "an acquire without a node (a single node) clears it")
			e.set("m1", func(m *domain.Mission) { m.Node = "set-by-transition" })
			require.Equal(t, "set-by-transition", e.get("m1").Node)
		})
		run(t, "StartRunsAtOnce", open, func(t *testing.T, e *env) {
			e.add("m1")
			now := t0.Add(time.Hour)
			m := acquire(e, engine.AcquireQuery{Now: now, Owner: "a", LeaseTTL: time.Minute, Start: true})
			require.Equal(t, domain.StateRunning, m.State)
			require.True(t, m.StartedAt.Equal(now))
			requireCounts(e, map[domain.MissionState]int{domain.StateRunning: 1})
		})
		run(t, "RowIsTheMissionAsLeased", open, func(t *testing.T, e *env) {
			e.add("m1", func(m *domain.Mission) {
				m.State, m.Attempt, m.Lease.Epoch = domain.StateInterrupted, 1, 3
				m.Checkpoint = []byte(`{"step":2}`)
			})
			e.add("m2", func(m *domain.Mission) { m.ID, m.Title = "m2", "second" })
			now := t0.Add(time.Hour)
			var first, second engine.Acquired
			var read domain.Mission
			e.update(func(tx engine.Tx) error {
				var err error
				if first, err = tx.MissionAcquire(e.ctx, acquireDefaults(engine.AcquireQuery{Now: now, Owner: "a", Profile: "p", Row: true, Start: true})); err != nil {
					return err
				}
				if read, err = tx.MissionGet(e.ctx, first.ID); err != nil {
					return err
				}
				second, err = tx.MissionAcquire(e.ctx, acquireDefaults(engine.AcquireQuery{Now: now, Owner: "a"}))
				return err
			})
			require.NotNil(t, first.Row, "Row asked for the whole mission")
			require.Nil(t, second.Row, "no Row asked, none returned")
			requireSameMission(t, read, *first.Row)
			r := first.Row
			require.Equal(t, "m1", first.ID)
			require.Equal(t, []any{r.ID, r.VoyageID, r.State, r.Attempt, r.Lease.Epoch, r.Lease.Owner, r.Profile, true, r.VoyageActive},
				[]any{first.ID, first.VoyageID, first.State, first.Attempt, first.Lease.Epoch, first.Lease.Owner, first.Profile, first.Resumed, first.VoyageActive})
			require.True(t, first.Lease.ExpiresAt.Equal(r.Lease.ExpiresAt) && first.Started.Equal(r.StartedAt) && first.Started.Equal(now))
			require.Equal(t, domain.StateRunning, r.State)
			require.Equal(t, 2, r.Attempt)
			require.JSONEq(t, `{"step":2}`, string(r.Checkpoint))
			require.Equal(t, "m2", second.ID)
		})
		run(t, "ExcludeSkipsTheNamed", open, func(t *testing.T, e *env) {
			seedPickOrder(e)
			skip := pickOrder[:2]
			require.Equal(t, pickOrder[2], acquire(e, engine.AcquireQuery{Exclude: skip}).ID, "the first not excluded, in pick order")
			require.Equal(t, pickOrder[0], acquire(e, engine.AcquireQuery{}).ID, "an excluded mission stays pending")
			require.Equal(t, pickOrder[1], acquire(e, engine.AcquireQuery{MissionID: pickOrder[1], Exclude: skip}).ID, "ignored with a mission id")
		})
		run(t, "NeverTheSameMissionTwice", open, func(t *testing.T, e *env) {
			e.add("m1")
			acquire(e, engine.AcquireQuery{})
			requireNoWork(e, engine.AcquireQuery{})
		})
		run(t, "PickOrder", open, func(t *testing.T, e *env) {
			seedPickOrder(e)
			var got []string
			for range 6 {
				got = append(got, acquire(e, engine.AcquireQuery{}).ID)
			}
			require.Equal(t, pickOrder, got)
			requireNoWork(e, engine.AcquireQuery{})
		})
		run(t, "OnlyPendingAndInterrupted", open, func(t *testing.T, e *env) {
			for _, s := range []domain.MissionState{domain.StateLeased, domain.StateRunning, domain.StateCompleted,
				domain.StateFailed, domain.StateBlocked, domain.StateCancelled} {
				e.add("m-"+string(s), inState(s))
			}
			requireNoWork(e, engine.AcquireQuery{})
			e.add("m-interrupted", inState(domain.StateInterrupted))
			require.Equal(t, "m-interrupted", acquire(e, engine.AcquireQuery{}).ID)
		})
		run(t, "NotBeforeAndWaitReason", open, func(t *testing.T, e *env) {
			e.add("later", func(m *domain.Mission) { m.NotBefore = t0.Add(time.Hour) })
			e.add("waiting", func(m *domain.Mission) { m.WaitReason = "checkout" })
			requireNoWork(e, engine.AcquireQuery{Now: t0.Add(time.Hour - time.Millisecond)})
			require.Equal(t, "later", acquire(e, engine.AcquireQuery{Now: t0.Add(time.Hour)}).ID)
			requireNoWork(e, engine.AcquireQuery{Now: t0.Add(2 * time.Hour)})
		})
		run(t, "HardEdgeWaitsForCompletedAndLanded", open, func(t *testing.T, e *env) {
			e.add("up")
			e.add("down", withPriority(1))
			e.edge("down", "up", domain.EdgeHard, domain.SourceUser)
			require.Equal(t, "up", acquire(e, engine.AcquireQuery{MissionID: ""}).ID)
			for _, l := range []domain.LandingState{domain.LandingPending, domain.LandingReview, domain.LandingConflicted} {
				e.set("up", func(m *domain.Mission) { m.State, m.Landing = domain.StateCompleted, l })
				requireNoWork(e, engine.AcquireQuery{})
			}
			e.set("up", func(m *domain.Mission) { m.State, m.Landing = domain.StateFailed, domain.LandingNone })
			requireNoWork(e, engine.AcquireQuery{})
			e.set("up", func(m *domain.Mission) { m.State, m.Landing = domain.StateCompleted, domain.LandingLanded })
			require.Equal(t, "down", acquire(e, engine.AcquireQuery{}).ID)
		})
		run(t, "HardEdgeSatisfiedByNothingToLand", open, func(t *testing.T, e *env) {
			e.add("up", inState(domain.StateCompleted), func(m *domain.Mission) { m.Landing = domain.LandingNotRequired })
			e.add("down")
			e.edge("down", "up", domain.EdgeHard, domain.SourceUser)
			require.Equal(t, "down", acquire(e, engine.AcquireQuery{}).ID)
		})
		run(t, "SerializationWaitsForAnyEnd", open, func(t *testing.T, e *env) {
			e.add("first", inState(domain.StateRunning))
			e.add("then")
			e.edge("then", "first", domain.EdgeSerialization, domain.SourceUser)
			requireNoWork(e, engine.AcquireQuery{})
			e.set("first", func(m *domain.Mission) { m.State = domain.StateBlocked })
			requireNoWork(e, engine.AcquireQuery{})
			e.set("first", func(m *domain.Mission) { m.State = domain.StateFailed })
			require.Equal(t, "then", acquire(e, engine.AcquireQuery{}).ID)
		})
		run(t, "SoftEdgeDoesNotWait", open, func(t *testing.T, e *env) {
			e.add("first", inState(domain.StateRunning))
			e.add("then")
			e.edge("then", "first", domain.EdgeSoft, domain.SourceUser)
			require.Equal(t, "then", acquire(e, engine.AcquireQuery{}).ID)
		})
		run(t, "ConflictEdgeEitherDirection", open, func(t *testing.T, e *env) {
			e.add("a")
			e.add("b")
			e.edge("a", "b", domain.EdgeConflict, domain.SourceScheduler)
			require.Equal(t, "a", acquire(e, engine.AcquireQuery{}).ID)
			requireNoWork(e, engine.AcquireQuery{}) // b conflicts with the leased a
			e.set("a", func(m *domain.Mission) { m.State = domain.StatePending })
			e.set("b", func(m *domain.Mission) { m.State = domain.StateRunning })
			requireNoWork(e, engine.AcquireQuery{}) // a conflicts with the running b
			e.set("b", func(m *domain.Mission) { m.State = domain.StateCompleted })
			require.Equal(t, "a", acquire(e, engine.AcquireQuery{}).ID)
		})
		run(t, "ExclusiveRunsAloneInItsRepository", open, func(t *testing.T, e *env) {
			e.add("alone", exclusive, withPriority(1))
			e.add("other")
			e.add("elsewhere", inRepo("/other"))
			require.Equal(t, "alone", acquire(e, engine.AcquireQuery{}).ID)
			require.Equal(t, "elsewhere", acquire(e, engine.AcquireQuery{}).ID)
			requireNoWork(e, engine.AcquireQuery{})
		})
		run(t, "ExclusiveWaitsForTheRepositoryToEmpty", open, func(t *testing.T, e *env) {
			e.add("busy", inState(domain.StateRunning))
			e.add("alone", exclusive)
			requireNoWork(e, engine.AcquireQuery{})
			e.set("busy", func(m *domain.Mission) { m.State = domain.StateCompleted })
			require.Equal(t, "alone", acquire(e, engine.AcquireQuery{}).ID)
		})
		run(t, "SerialIsExclusive", open, func(t *testing.T, e *env) {
			e.add("serial", func(m *domain.Mission) { m.Serial, m.Priority = true, 1 })
			e.add("other")
			require.Equal(t, "serial", acquire(e, engine.AcquireQuery{}).ID)
			requireNoWork(e, engine.AcquireQuery{})
		})
		run(t, "Paused", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.update(func(tx engine.Tx) error { return tx.SetPaused(e.ctx, true) })
			requireNoWork(e, engine.AcquireQuery{})
			requireNoWork(e, engine.AcquireQuery{MissionID: "m1"})
			e.update(func(tx engine.Tx) error { return tx.SetPaused(e.ctx, false) })
			require.Equal(t, "m1", acquire(e, engine.AcquireQuery{}).ID)
		})
		run(t, "Capabilities", open, func(t *testing.T, e *env) {
			e.add("needs", withPriority(1), func(m *domain.Mission) { m.Capabilities = []string{"go", "sql"} })
			requireNoWork(e, engine.AcquireQuery{Capabilities: []string{"go"}})
			e.add("any")
			require.Equal(t, "any", acquire(e, engine.AcquireQuery{Capabilities: []string{"go"}}).ID)
			requireNoWork(e, engine.AcquireQuery{})
			require.Equal(t, "needs", acquire(e, engine.AcquireQuery{Capabilities: []string{"sql", "x", "go"}}).ID)
		})
		run(t, "Personas", open, func(t *testing.T, e *env) {
			e.add("review", withPriority(1), func(m *domain.Mission) { m.Persona = "reviewer" })
			e.add("plain", withPriority(2))
			require.Equal(t, "plain", acquire(e, engine.AcquireQuery{Personas: []string{"implementer"}}).ID)
			e.set("plain", func(m *domain.Mission) { m.State = domain.StatePending })
			require.Equal(t, "review", acquire(e, engine.AcquireQuery{Personas: []string{"implementer", "reviewer"}}).ID)
			e.set("review", func(m *domain.Mission) { m.State = domain.StatePending })
			require.Equal(t, "review", acquire(e, engine.AcquireQuery{Personas: nil}).ID, "nil personas: any")
		})
		run(t, "Kinds", open, func(t *testing.T, e *env) {
			e.add("work", withPriority(1))
			e.add("review", func(m *domain.Mission) { m.Kind = domain.KindReview })
			e.add("debug", func(m *domain.Mission) { m.Kind = domain.KindDebug })
			require.Equal(t, "review", acquire(e, engine.AcquireQuery{Kinds: []domain.MissionKind{domain.KindReview}}).ID)
			requireNoWork(e, engine.AcquireQuery{Kinds: []domain.MissionKind{domain.KindReview, domain.KindVerify}})
			require.Equal(t, "work", acquire(e, engine.AcquireQuery{Kinds: nil}).ID)
		})
		run(t, "MissionID", open, func(t *testing.T, e *env) {
			e.add("first", withPriority(1))
			e.add("chosen", withPriority(50))
			e.add("blocked", withPriority(50), func(m *domain.Mission) { m.WaitReason = "checkout" })
			require.Equal(t, "chosen", acquire(e, engine.AcquireQuery{MissionID: "chosen"}).ID)
			requireNoWork(e, engine.AcquireQuery{MissionID: "chosen"})
			requireNoWork(e, engine.AcquireQuery{MissionID: "blocked"})
			requireNoWork(e, engine.AcquireQuery{MissionID: "missing"})
			requireNoWork(e, engine.AcquireQuery{MissionID: "first", Kinds: []domain.MissionKind{domain.KindReview}})
			require.Equal(t, "first", acquire(e, engine.AcquireQuery{MissionID: "first"}).ID)
		})
		run(t, "Repository", open, func(t *testing.T, e *env) {
			e.add("here", withPriority(1))
			e.add("there", inRepo("/there"))
			require.Equal(t, "there", acquire(e, engine.AcquireQuery{Repository: "/there"}).ID)
			requireNoWork(e, engine.AcquireQuery{Repository: "/there"})
			requireNoWork(e, engine.AcquireQuery{Repository: "/nowhere"})
		})
		run(t, "SkipsTheBlockedForTheNextRunnable", open, func(t *testing.T, e *env) {
			e.add("up", inState(domain.StateRunning))
			e.add("urgent", withPriority(1))
			e.edge("urgent", "up", domain.EdgeHard, domain.SourceUser)
			e.add("normal")
			require.Equal(t, "normal", acquire(e, engine.AcquireQuery{}).ID)
		})
	})

	group(t, "MissionsRunnableOrder", func(t *testing.T) {
		run(t, "PickOrderWhateverTheDependencies", open, func(t *testing.T, e *env) {
			seedPickOrder(e)
			e.add("up", inState(domain.StateRunning))
			e.add("blocked", withPriority(1))
			e.edge("blocked", "up", domain.EdgeHard, domain.SourceUser)
			e.add("done", inState(domain.StateCompleted))
			var got []domain.Mission
			e.view(func(r engine.Reader) error {
				var err error
				got, err = r.MissionsRunnableOrder(e.ctx, 100)
				return err
			})
			require.Equal(t, append([]string{"p1", "blocked"}, pickOrder[1:]...), ids(got))
			e.view(func(r engine.Reader) error {
				got, err := r.MissionsRunnableOrder(e.ctx, 2)
				require.NoError(t, err)
				require.Equal(t, []string{"p1", "blocked"}, ids(got))
				return nil
			})
		})
	})
}

// pickOrder is the order seedPickOrder's missions are picked in: priority ascending, then
// the missions of an active voyage, then interrupted before pending, then oldest first, then
// by id.
var pickOrder = []string{"p1", "p50-voyage", "p50-interrupted", "p50-old", "p50-new-a", "p50-new-b"}

// seedPickOrder stores pickOrder's missions, created in a scrambled order.
func seedPickOrder(e *env) {
	e.voyage("v")
	e.update(func(tx engine.Tx) error {
		same := e.next().Add(time.Second)
		for _, m := range []*domain.Mission{
			e.mission("p50-old", withPriority(50)),
			e.mission("p50-new-b", withPriority(50), func(m *domain.Mission) { m.CreatedAt = same }),
			e.mission("p50-interrupted", withPriority(50), inState(domain.StateInterrupted)),
			e.mission("p50-voyage", withPriority(50), inVoyage("v")),
			e.mission("p50-new-a", withPriority(50), func(m *domain.Mission) { m.CreatedAt = same }),
			e.mission("p1", withPriority(1)),
		} {
			if err := tx.MissionInsert(e.ctx, m); err != nil {
				return err
			}
		}
		return activateVoyage(e.ctx, tx, "v")
	})
}

// acquire runs MissionAcquire with q (defaults: now t0+1h, owner "agent", a minute's lease)
// and requires a mission.
func acquire(e *env, q engine.AcquireQuery) domain.Mission {
	e.t.Helper()
	q = acquireDefaults(q)
	var m domain.Mission
	e.update(func(tx engine.Tx) error {
		a, err := tx.MissionAcquire(e.ctx, q)
		if err != nil {
			return err
		}
		m, err = tx.MissionGet(e.ctx, a.ID)
		return err
	})
	return m
}

func acquireDefaults(q engine.AcquireQuery) engine.AcquireQuery {
	if q.Now.IsZero() {
		q.Now = t0.Add(time.Hour)
	}
	if q.Owner == "" {
		q.Owner = "agent"
	}
	if q.LeaseTTL == 0 {
		q.LeaseTTL = time.Minute
	}
	return q
}

// requireNoWork requires MissionAcquire with q to find nothing (ErrNoWork) and change
// nothing.
func requireNoWork(e *env, q engine.AcquireQuery) {
	e.t.Helper()
	require.Empty(e.t, tryAcquire(e, q))
}

// tryAcquire runs MissionAcquire with q in a transaction it rolls back, and returns the id
// acquired, or "" when it was ErrNoWork (any other error fails the test).
func tryAcquire(e *env, q engine.AcquireQuery) string {
	e.t.Helper()
	q = acquireDefaults(q)
	var id string
	errRollback := errorString("roll back")
	err := e.s.Update(e.ctx, func(tx engine.Tx) error {
		m, err := tx.MissionAcquire(e.ctx, q)
		if err != nil {
			return err
		}
		id = m.ID
		return errRollback
	})
	if id != "" {
		require.ErrorIs(e.t, err, errRollback)
		return id
	}
	require.ErrorIs(e.t, err, domain.ErrNoWork)
	return ""
}

// errorString is an error of its own, to roll a transaction back on purpose.
type errorString string

func (s errorString) Error() string { return string(s) }
