package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseTransactions covers Update, View, DataVersion and Close: atomicity, rollback,
// snapshots, serialised concurrent writers.
func exerciseTransactions(t *testing.T, open Opener) {
	group(t, "Update", func(t *testing.T) {
		run(t, "ReadsItsOwnWrites", open, func(t *testing.T, e *env) {
			var seen string
			e.update(func(tx engine.Tx) error {
				if err := tx.MissionInsert(e.ctx, e.mission("m1")); err != nil {
					return err
				}
				m, err := tx.MissionGet(e.ctx, "m1")
				seen = m.ID
				return err
			})
			require.Equal(t, "m1", seen)
		})
		run(t, "FailedFunctionWritesNothing", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.voyage("v")
			before := e.get("m1")
			boom := errors.New("boom")
			m2 := e.mission("m2")
			var reached bool
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				m, err := tx.MissionGet(e.ctx, "m1")
				if err != nil {
					return err
				}
				g := engine.Guard{State: m.State, Epoch: m.Lease.Epoch}
				m.State, m.Title = domain.StateRunning, "changed"
				for _, step := range []func() error{
					func() error { return tx.MissionInsert(e.ctx, m2) },
					func() error {
						return tx.MissionSet(e.ctx, engine.MissionChange{Row: &m, From: g, Set: engine.AllMissionFields})
					},
					func() error { return tx.EventAppend(e.ctx, &domain.Event{At: t0, Type: "x", MissionID: "m1"}) },
					func() error {
						return tx.HoldUpsert(e.ctx, &engine.Hold{MissionID: "m1", Reason: engine.Reason{Code: engine.WhyQueued}, UpdatedAt: t0})
					},
					func() error { return tx.SetPaused(e.ctx, true) },
					func() error {
						return tx.VoyageInsert(e.ctx, &domain.Voyage{ID: "v2", Title: "v2", State: domain.VoyageOpen, CreatedAt: t0, UpdatedAt: t0})
					},
					func() error { return tx.MissionDelete(e.ctx, "m2") },
				} {
					if err := step(); err != nil {
						return err
					}
				}
				reached = true
				return fmt.Errorf("wrapped: %w", boom)
			})
			require.True(t, reached, "every write succeeded before the failure: %v", err)
			require.ErrorIs(t, err, boom, "Update returns fn's error")
			requireSameMission(t, before, e.get("m1"))
			require.Empty(t, events(e, engine.EventFilter{}))
			require.Empty(t, holdList(e))
			require.False(t, paused(e))
			requireCounts(e, map[domain.MissionState]int{domain.StatePending: 1})
			requireVoyageCounts(e, map[domain.VoyageState]int{domain.VoyageOpen: 1})
			e.view(func(r engine.Reader) error {
				_, err := r.MissionGet(e.ctx, "m2")
				require.ErrorIs(t, err, domain.ErrNotFound)
				_, err = r.VoyageGet(e.ctx, "v2")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
		run(t, "AGuardMissWritesNothingOfItsOwn", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.add("m2")
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				m := e.mission("m1", func(m *domain.Mission) { m.Title = "stale" })
				if err := tx.MissionSet(e.ctx, engine.MissionChange{Row: m, From: engine.Guard{State: domain.StateRunning}, Set: engine.AllMissionFields}); !errors.Is(err, domain.ErrGuard) {
					return fmt.Errorf("want ErrGuard, got %v", err)
				}
				cur, err := tx.MissionGet(e.ctx, "m2")
				if err != nil {
					return err
				}
				g := engine.Guard{State: cur.State, Epoch: cur.Lease.Epoch}
				cur.Title = "written"
				return tx.MissionSet(e.ctx, engine.MissionChange{Row: &cur, From: g, Set: engine.AllMissionFields})
			})
			require.NoError(t, err)
			require.Equal(t, "mission m1", e.get("m1").Title)
			require.Equal(t, "written", e.get("m2").Title)
		})
		run(t, "CancelledContextWritesNothing", open, func(t *testing.T, e *env) {
			ctx, cancel := context.WithCancel(e.ctx)
			cancel()
			err := e.s.Update(ctx, func(tx engine.Tx) error { return tx.MissionInsert(ctx, e.mission("m1")) })
			require.ErrorIs(t, err, context.Canceled)
			requireCounts(e, map[domain.MissionState]int{})
		})
		run(t, "ConcurrentUpdatesLoseNothing", open, func(t *testing.T, e *env) {
			e.add("m1")
			const writers, each = 8, 25
			var wg sync.WaitGroup
			errs := make(chan error, writers*each)
			for w := range writers {
				wg.Go(func() {
					for i := range each {
						errs <- e.s.Update(e.ctx, func(tx engine.Tx) error {
							m, err := tx.MissionGet(e.ctx, "m1")
							if err != nil {
								return err
							}
							g := engine.Guard{State: m.State, Epoch: m.Lease.Epoch}
							m.AttemptsUsed++
							if err := tx.MissionSet(e.ctx, engine.MissionChange{Row: &m, From: g, Set: engine.AllMissionFields}); err != nil {
								return err
							}
							return tx.EventAppend(e.ctx, &domain.Event{At: t0, Type: fmt.Sprintf("w%d-%d", w, i), MissionID: "m1"})
						})
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.Equal(t, writers*each, e.get("m1").AttemptsUsed)
			evs := events(e, engine.EventFilter{Limit: writers * each})
			require.Len(t, evs, writers*each)
			seen := map[int64]bool{}
			for _, ev := range evs {
				require.False(t, seen[ev.Seq], "seq %d twice", ev.Seq)
				seen[ev.Seq] = true
			}
		})
		run(t, "ConcurrentFailuresDoNotTouchOtherWriters", open, func(t *testing.T, e *env) {
			const writers = 16
			var wg sync.WaitGroup
			errs := make([]error, writers)
			for w := range writers {
				wg.Go(func() {
					errs[w] = e.s.Update(e.ctx, func(tx engine.Tx) error {
						if err := tx.MissionInsert(e.ctx, e.missionAt(fmt.Sprintf("m%02d", w))); err != nil {
							return err
						}
						if w%2 == 1 {
							return errorString("odd writers fail")
						}
						return nil
					})
				})
			}
			wg.Wait()
			var want []string
			for w, err := range errs {
				if w%2 == 1 {
					require.ErrorIs(t, err, errorString("odd writers fail"))
					continue
				}
				require.NoError(t, err)
				want = append(want, fmt.Sprintf("m%02d", w))
			}
			require.Equal(t, want, ids(listAll(e, engine.MissionFilter{})))
			requireCounts(e, map[domain.MissionState]int{domain.StatePending: writers / 2})
		})
		run(t, "ConcurrentAcquiresLeaseEachMissionOnce", open, func(t *testing.T, e *env) {
			const missions, agents = 24, 6
			ms := make([]*domain.Mission, 0, missions)
			for i := range missions {
				ms = append(ms, e.mission(fmt.Sprintf("m%02d", i)))
			}
			e.insert(ms...)
			var mu sync.Mutex
			got := map[string]string{}
			var wg sync.WaitGroup
			errs := make(chan error, agents)
			for a := range agents {
				wg.Go(func() {
					owner := fmt.Sprintf("agent-%d", a)
					for {
						var m engine.Acquired
						err := e.s.Update(e.ctx, func(tx engine.Tx) error {
							var err error
							m, err = tx.MissionAcquire(e.ctx, acquireDefaults(engine.AcquireQuery{Owner: owner}))
							return err
						})
						if errors.Is(err, domain.ErrNoWork) {
							errs <- nil
							return
						}
						if err != nil {
							errs <- err
							return
						}
						mu.Lock()
						if prev, twice := got[m.ID]; twice {
							mu.Unlock()
							errs <- fmt.Errorf("%s leased to %s and %s", m.ID, prev, owner)
							return
						}
						got[m.ID] = owner
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.Len(t, got, missions)
			for id, owner := range got {
				m := e.get(id)
				require.Equal(t, owner, m.Lease.Owner)
				require.Equal(t, int64(1), m.Lease.Epoch)
			}
		})
	})

	group(t, "View", func(t *testing.T) {
		run(t, "ASnapshotWhileAWriterCommits", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.view(func(r engine.Reader) error {
				m, err := r.MissionGet(e.ctx, "m1")
				require.NoError(t, err)
				require.Equal(t, "mission m1", m.Title)
				done := make(chan error, 1)
				go func() {
					done <- e.s.Update(e.ctx, func(tx engine.Tx) error {
						cur, err := tx.MissionGet(e.ctx, "m1")
						if err != nil {
							return err
						}
						g := engine.Guard{State: cur.State, Epoch: cur.Lease.Epoch}
						cur.Title, cur.State = "changed", domain.StateRunning
						if err := tx.MissionSet(e.ctx, engine.MissionChange{Row: &cur, From: g, Set: engine.AllMissionFields}); err != nil {
							return err
						}
						return tx.MissionInsert(e.ctx, e.missionAt("m2"))
					})
				}()
				select {
				case err := <-done:
					require.NoError(t, err)
				case <-time.After(time.Minute):
					t.Fatal("a writer waited for an open View to end")
				}
				m, err = r.MissionGet(e.ctx, "m1")
				require.NoError(t, err)
				require.Equal(t, "mission m1", m.Title, "the View still sees its snapshot")
				_, err = r.MissionGet(e.ctx, "m2")
				require.ErrorIs(t, err, domain.ErrNotFound)
				c, err := r.MissionCounts(e.ctx)
				require.NoError(t, err)
				require.Equal(t, map[domain.MissionState]int{domain.StatePending: 1}, nonZero(c))
				return nil
			})
			require.Equal(t, "changed", e.get("m1").Title)
			requireCounts(e, map[domain.MissionState]int{domain.StatePending: 1, domain.StateRunning: 1})
		})
		run(t, "ReturnsFunctionsError", open, func(t *testing.T, e *env) {
			boom := errors.New("boom")
			require.ErrorIs(t, e.s.View(e.ctx, func(engine.Reader) error { return boom }), boom)
		})
		run(t, "ManyConcurrentViews", open, func(t *testing.T, e *env) {
			e.add("m1")
			var wg sync.WaitGroup
			errs := make(chan error, 32)
			for range 32 {
				wg.Go(func() {
					errs <- e.s.View(e.ctx, func(r engine.Reader) error {
						_, err := r.MissionGet(e.ctx, "m1")
						return err
					})
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
		})
	})

	group(t, "Changes", func(t *testing.T) {
		run(t, "ClosesWhenItsContextEnds", open, func(t *testing.T, e *env) {
			ctx, cancel := context.WithCancel(e.ctx)
			ch := e.s.Changes(ctx, 10*time.Millisecond)
			cancel()
			requireClosed(t, ch, "its context ended")
		})
		run(t, "ClosesWhenTheStoreCloses", open, func(t *testing.T, e *env) {
			ch := e.s.Changes(e.ctx, 10*time.Millisecond)
			require.NoError(t, e.s.Close())
			requireClosed(t, ch, "the store closed")
		})
		run(t, "NeverBlocksAWriter", open, func(t *testing.T, e *env) {
			// Nobody reads the channel: commits go on (the channel holds one signal at most).
			_ = e.s.Changes(e.ctx, time.Millisecond)
			for i := range 20 {
				e.add(fmt.Sprintf("m%02d", i))
			}
			requireCounts(e, map[domain.MissionState]int{domain.StatePending: 20})
		})
	})

	group(t, "Close", func(t *testing.T) {
		run(t, "ThenUpdateAndViewFail", open, func(t *testing.T, e *env) {
			e.add("m1")
			require.NoError(t, e.s.Close())
			require.Error(t, e.s.Update(e.ctx, func(tx engine.Tx) error { return tx.MissionInsert(e.ctx, e.mission("m2")) }))
			require.Error(t, e.s.View(e.ctx, func(r engine.Reader) error {
				_, err := r.MissionGet(e.ctx, "m1")
				return err
			}))
		})
	})
}

// missionAt builds a pending mission created at t0 without touching e's counter, so that
// several goroutines may call it.
func (e *env) missionAt(id string) *domain.Mission {
	m := &domain.Mission{ID: id, Title: "mission " + id, Brief: "do " + id, Repository: "/repo", Priority: 100,
		Kind: domain.KindWork, Review: "none", State: domain.StatePending, Landing: domain.LandingNone,
		WriteArea: []string{id + "/"}, CreatedAt: t0, UpdatedAt: t0}
	return m
}

// changeWait bounds how long a case waits for a change signal or a channel's close: far above
// any backend's notice delay, so that only a missing signal fails, never a slow machine.
const changeWait = 30 * time.Second

// drain takes the signals already waiting on ch.
func drain(ch <-chan struct{}) {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// requireClosed requires ch to close (after any signals still in it) within changeWait.
func requireClosed(t *testing.T, ch <-chan struct{}, why string) {
	t.Helper()
	deadline := time.After(changeWait)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("the change channel stayed open %s after %s", changeWait, why)
		}
	}
}
