package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exercisePrune covers PruneCandidates, UnfinishedRelated, VoyagePruneCandidates,
// MissionPrune, VoyagePrune and PruneGlobal.
func exercisePrune(t *testing.T, open Opener) {
	group(t, "PruneCandidates", func(t *testing.T) {
		run(t, "TerminalMissionsCreatedBeforePagedWithoutRepeats", open, func(t *testing.T, e *env) {
			same := t0.Add(time.Second)
			var want []string
			for i, s := range []domain.MissionState{domain.StateCompleted, domain.StateFailed, domain.StateCancelled,
				domain.StateCompleted, domain.StateCompleted, domain.StateFailed, domain.StateCancelled} {
				id := fmt.Sprintf("t%d", i)
				want = append(want, id)
				e.add(id, inState(s), func(m *domain.Mission) {
					if i >= 3 {
						m.CreatedAt = same // several in one millisecond
					}
				})
			}
			e.add("pending")
			e.add("blocked", inState(domain.StateBlocked))
			e.add("running", inState(domain.StateRunning))
			e.add("too-new", inState(domain.StateCompleted), func(m *domain.Mission) { m.CreatedAt = t0.Add(time.Hour) })
			before := t0.Add(time.Hour)
			for _, limit := range []int{1, 2, 3, 100} {
				var got []string
				cursor := ""
				for range 100 {
					var page []engine.PruneCandidate
					e.view(func(r engine.Reader) error {
						var err error
						page, err = r.PruneCandidates(e.ctx, engine.PruneQuery{Before: before, Cursor: cursor, Limit: limit})
						return err
					})
					require.LessOrEqual(t, len(page), limit)
					if len(page) == 0 {
						break
					}
					for _, c := range page {
						got = append(got, c.ID)
					}
					cursor = page[len(page)-1].Cursor
				}
				require.ElementsMatch(t, want, got, "limit %d", limit)
			}
		})
	})

	group(t, "UnfinishedRelated", func(t *testing.T) {
		run(t, "DependentsAndChildrenAndSubjects", open, func(t *testing.T, e *env) {
			e.add("x", inState(domain.StateCompleted))
			e.add("dep-live")
			e.add("dep-done", inState(domain.StateCompleted))
			e.add("conflict-live", inState(domain.StateRunning))
			e.add("child-live", func(m *domain.Mission) { m.ParentID = "x" })
			e.add("child-done", inState(domain.StateCancelled), func(m *domain.Mission) { m.ParentID = "x" })
			e.add("review-live", func(m *domain.Mission) { m.SubjectID, m.Kind = "x", domain.KindReview })
			e.edge("dep-live", "x", domain.EdgeHard, domain.SourceUser)
			e.edge("dep-done", "x", domain.EdgeHard, domain.SourceUser)
			e.edge("conflict-live", "x", domain.EdgeConflict, domain.SourceScheduler)
			e.edge("x", "dep-live", domain.EdgeSoft, domain.SourceUser) // x's own edge: not a dependent
			e.view(func(r engine.Reader) error {
				deps, related, err := r.UnfinishedRelated(e.ctx, "x")
				require.NoError(t, err)
				require.Equal(t, 2, deps)
				require.Equal(t, 2, related)
				deps, related, err = r.UnfinishedRelated(e.ctx, "dep-done")
				require.NoError(t, err)
				require.Zero(t, deps+related)
				return nil
			})
		})
	})

	group(t, "VoyagePruneCandidates", func(t *testing.T) {
		run(t, "SettledBeforePaged", open, func(t *testing.T, e *env) {
			old := t0.Add(time.Minute)
			var want []string
			for i := range 5 {
				id := fmt.Sprintf("v%d", i)
				want = append(want, id)
				state := domain.VoyageCompleted
				if i%2 == 1 {
					state = domain.VoyageCancelled
				}
				e.voyage(id, func(v *domain.Voyage) { v.State, v.SettledAt = state, old })
			}
			e.voyage("open")
			e.voyage("blocked", func(v *domain.Voyage) { v.State, v.SettledAt = domain.VoyageBlocked, old })
			e.voyage("recent", func(v *domain.Voyage) { v.State, v.SettledAt = domain.VoyageCompleted, t0.Add(2*time.Hour) })
			e.voyage("unsettled", func(v *domain.Voyage) { v.State = domain.VoyageCompleted })
			var got []string
			cursor := ""
			for range 100 {
				var page []engine.PruneCandidate
				e.view(func(r engine.Reader) error {
					var err error
					page, err = r.VoyagePruneCandidates(e.ctx, engine.PruneQuery{Before: t0.Add(time.Hour), Cursor: cursor, Limit: 2})
					return err
				})
				require.LessOrEqual(t, len(page), 2)
				if len(page) == 0 {
					break
				}
				for _, c := range page {
					got = append(got, c.ID)
				}
				cursor = page[len(page)-1].Cursor
			}
			require.ElementsMatch(t, want, got)
		})
	})

	group(t, "MissionPrune", func(t *testing.T) {
		run(t, "DeletesWhatWasRecordedOnlyForIt", open, func(t *testing.T, e *env) {
			e.add("gone", inState(domain.StateCompleted))
			e.add("kept", inState(domain.StateCompleted))
			e.edge("kept", "gone", domain.EdgeHard, domain.SourceUser)
			e.edge("gone", "kept", domain.EdgeSoft, domain.SourceUser)
			e.update(func(tx engine.Tx) error {
				for _, ev := range []*domain.Event{{At: t0, Type: "a", MissionID: "gone"}, {At: t0, Type: "b", MissionID: "gone"},
					{At: t0, Type: "c", MissionID: "kept"}} {
					if err := tx.EventAppend(e.ctx, ev); err != nil {
						return err
					}
				}
				for _, a := range []*domain.Attempt{{MissionID: "gone", Attempt: 1, Epoch: 1, Outcome: "failed", EndedAt: t0},
					{MissionID: "gone", Attempt: 2, Epoch: 2, Outcome: "completed", EndedAt: t0},
					{MissionID: "kept", Attempt: 1, Epoch: 1, Outcome: "completed", EndedAt: t0}} {
					if err := tx.AttemptInsert(e.ctx, a); err != nil {
						return err
					}
				}
				if err := tx.LandingUpsert(e.ctx, &domain.Landing{MissionID: "gone", Attempt: 2, Status: "landed", At: t0}); err != nil {
					return err
				}
				return tx.WriteAreaSet(e.ctx, "gone", "/repo", []string{"gone/"})
			})
			hold(e, "gone", engine.WhyQueued)
			resolved := func(x *domain.Escalation) { x.State = domain.EscalationResolved }
			e.escalation("only-gone", resolved, func(x *domain.Escalation) { x.MissionIDs = []string{"gone"} })
			e.escalation("gone-and-kept", resolved, func(x *domain.Escalation) { x.MissionIDs = []string{"gone", "kept"} })
			e.escalation("open-gone", func(x *domain.Escalation) { x.MissionIDs = []string{"gone"} })
			var c engine.PruneCounts
			e.update(func(tx engine.Tx) error {
				var err error
				c, err = tx.MissionPrune(e.ctx, "gone")
				return err
			})
			require.Equal(t, engine.PruneCounts{Missions: 1, Events: 2, Attempts: 2, Landings: 1, Escalations: 1}, c)
			e.view(func(r engine.Reader) error {
				_, err := r.MissionGet(e.ctx, "gone")
				require.ErrorIs(t, err, domain.ErrNotFound)
				_, err = r.HoldGet(e.ctx, "gone")
				require.ErrorIs(t, err, domain.ErrNotFound)
				for _, id := range []string{"gone-and-kept", "open-gone"} {
					_, err = r.EscalationGet(e.ctx, id)
					require.NoError(t, err, id)
				}
				_, err = r.EscalationGet(e.ctx, "only-gone")
				require.ErrorIs(t, err, domain.ErrNotFound)
				deps, err := r.DependenciesOf(e.ctx, "kept")
				require.NoError(t, err)
				require.Empty(t, deps)
				deps, err = r.DependentsOf(e.ctx, "kept")
				require.NoError(t, err)
				require.Empty(t, deps)
				return nil
			})
			require.Empty(t, overlapIDs(e, "/repo", "gone/"))
			require.Empty(t, attempts(e, "gone"))
			require.Len(t, attempts(e, "kept"), 1)
			require.Equal(t, []string{"c"}, eventTypes(events(e, engine.EventFilter{})))
			requireCounts(e, map[domain.MissionState]int{domain.StateCompleted: 1})
		})
		run(t, "NotFound", open, func(t *testing.T, e *env) {
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				_, err := tx.MissionPrune(e.ctx, "nope")
				return err
			})
			require.ErrorIs(t, err, domain.ErrNotFound)
		})
	})

	group(t, "VoyagePrune", func(t *testing.T) {
		run(t, "RefusedWhileMissionsRemainThenDeletes", open, func(t *testing.T, e *env) {
			e.voyage("v", func(v *domain.Voyage) { v.State, v.SettledAt = domain.VoyageCompleted, t0 })
			e.voyage("w")
			e.add("m", inVoyage("v"), inState(domain.StateCompleted))
			e.update(func(tx engine.Tx) error {
				for _, ev := range []*domain.Event{{At: t0, Type: "v1", VoyageID: "v"}, {At: t0, Type: "v2", VoyageID: "v"},
					{At: t0, Type: "w1", VoyageID: "w"}} {
					if err := tx.EventAppend(e.ctx, ev); err != nil {
						return err
					}
				}
				return nil
			})
			resolved := func(x *domain.Escalation) { x.State = domain.EscalationResolved }
			e.escalation("of-v", resolved, func(x *domain.Escalation) { x.VoyageID = "v" })
			e.escalation("of-v-open", func(x *domain.Escalation) { x.VoyageID = "v" })
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				_, err := tx.VoyagePrune(e.ctx, "v")
				return err
			})
			require.ErrorIs(t, err, domain.ErrGuard)
			require.Equal(t, "v", voyageGet(e, "v").ID)

			e.update(func(tx engine.Tx) error {
				_, err := tx.MissionPrune(e.ctx, "m")
				return err
			})
			var c engine.PruneCounts
			e.update(func(tx engine.Tx) error {
				var err error
				c, err = tx.VoyagePrune(e.ctx, "v")
				return err
			})
			require.Equal(t, engine.PruneCounts{Voyages: 1, Events: 2, Escalations: 1}, c)
			require.Equal(t, []string{"w1"}, eventTypes(events(e, engine.EventFilter{})))
			require.Equal(t, []string{"of-v-open"}, escalationIDs(escalationList(e, engine.EscalationFilter{})))
			e.view(func(r engine.Reader) error {
				_, err := r.VoyageGet(e.ctx, "v")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
			requireVoyageCounts(e, map[domain.VoyageState]int{domain.VoyageOpen: 1})
		})
		run(t, "NotFound", open, func(t *testing.T, e *env) {
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				_, err := tx.VoyagePrune(e.ctx, "nope")
				return err
			})
			require.ErrorIs(t, err, domain.ErrNotFound)
		})
	})

	group(t, "PruneGlobal", func(t *testing.T) {
		run(t, "OldWavesAndSchedulerEventsUpToLimit", open, func(t *testing.T, e *env) {
			e.voyage("v")
			e.add("m")
			e.update(func(tx engine.Tx) error {
				for i := range 5 {
					at := t0.Add(time.Duration(i) * time.Minute)
					if err := tx.WaveInsert(e.ctx, &domain.Wave{At: at, Runnable: i}); err != nil {
						return err
					}
					for _, ev := range []*domain.Event{{At: at, Type: fmt.Sprintf("global%d", i)},
						{At: at, Type: fmt.Sprintf("mission%d", i), MissionID: "m"},
						{At: at, Type: fmt.Sprintf("voyage%d", i), VoyageID: "v"}} {
						if err := tx.EventAppend(e.ctx, ev); err != nil {
							return err
						}
					}
				}
				return nil
			})
			before := t0.Add(3 * time.Minute) // waves and global events 0, 1, 2 are older
			c := pruneGlobal(e, before, 2)
			require.Equal(t, engine.PruneCounts{Waves: 2, Events: 2}, c)
			c = pruneGlobal(e, before, 2)
			require.Equal(t, engine.PruneCounts{Waves: 1, Events: 1}, c)
			require.Equal(t, engine.PruneCounts{}, pruneGlobal(e, before, 2))
			var globals []string
			for _, ev := range events(e, engine.EventFilter{}) {
				if ev.MissionID == "" && ev.VoyageID == "" {
					globals = append(globals, ev.Type)
				}
			}
			require.Equal(t, []string{"global3", "global4"}, globals)
			require.Len(t, events(e, engine.EventFilter{MissionID: "m"}), 5)
			require.Len(t, events(e, engine.EventFilter{VoyageID: "v"}), 5)
			e.view(func(r engine.Reader) error {
				w, err := r.WaveLatest(e.ctx)
				require.NoError(t, err)
				require.Equal(t, 4, w.Runnable)
				return nil
			})
		})
	})
}

func pruneGlobal(e *env, before time.Time, limit int) engine.PruneCounts {
	e.t.Helper()
	var c engine.PruneCounts
	e.update(func(tx engine.Tx) error {
		var err error
		c, err = tx.PruneGlobal(e.ctx, before, limit)
		return err
	})
	return c
}
