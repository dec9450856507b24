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

// PairOpener returns two handles on one fresh database, as two processes would hold them
// (SQLite: two Stores on one file), both closed when t ends.
type PairOpener func(t *testing.T) (a, b engine.Store)

// ExerciseShared runs the cases that need two handles on one database: what one commits the
// other sees, Changes signals the other's commits, writers of both serialise without
// lost updates or double leases, and the host lock (when offered) excludes the other.
func ExerciseShared(t *testing.T, open PairOpener) {
	t.Helper()
	pair := func(name string, fn func(t *testing.T, a, b *env)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sa, sb := open(t)
			fn(t, &env{t: t, ctx: context.Background(), s: sa}, &env{t: t, ctx: context.Background(), s: sb})
		})
	}
	pair("CommitsAreSeenByTheOther", func(t *testing.T, a, b *env) {
		a.add("m1")
		require.Equal(t, "m1", b.get("m1").ID)
		b.set("m1", func(m *domain.Mission) { m.Title = "from b" })
		require.Equal(t, "from b", a.get("m1").Title)
		requireCounts(a, map[domain.MissionState]int{domain.StatePending: 1})
	})
	pair("ChangesNoticeTheOther", func(t *testing.T, a, b *env) {
		ctx, cancel := context.WithCancel(a.ctx)
		defer cancel()
		ch := a.s.Changes(ctx, 10*time.Millisecond)
		drain(ch) // a signal from before b commits may come (spurious signals are allowed)
		b.add("m1")
		select {
		case _, ok := <-ch:
			require.True(t, ok, "the change channel closed instead of signalling")
		case <-time.After(changeWait):
			t.Fatalf("no change signal %s after the other handle committed", changeWait)
		}
		require.Equal(t, "m1", a.get("m1").ID, "the signalled change is visible")
	})
	pair("WritersOfBothLoseNothing", func(t *testing.T, a, b *env) {
		a.add("m1")
		const each = 40
		var wg sync.WaitGroup
		errs := make(chan error, 2*each)
		for _, e := range []*env{a, b} {
			wg.Go(func() {
				for range each {
					errs <- e.s.Update(e.ctx, func(tx engine.Tx) error {
						m, err := tx.MissionGet(e.ctx, "m1")
						if err != nil {
							return err
						}
						g := engine.Guard{State: m.State, Epoch: m.Lease.Epoch}
						m.AttemptsUsed++
						return tx.MissionSet(e.ctx, engine.MissionChange{Row: &m, From: g, Set: engine.AllMissionFields})
					})
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, 2*each, b.get("m1").AttemptsUsed)
	})
	pair("AcquiresOfBothLeaseEachMissionOnce", func(t *testing.T, a, b *env) {
		const missions = 30
		ms := make([]*domain.Mission, 0, missions)
		for i := range missions {
			ms = append(ms, a.mission(fmt.Sprintf("m%02d", i)))
		}
		a.insert(ms...)
		var mu sync.Mutex
		got := map[string]int{}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w, e := range []*env{a, b, a, b} {
			wg.Go(func() {
				for {
					var m engine.Acquired
					err := e.s.Update(e.ctx, func(tx engine.Tx) error {
						var err error
						m, err = tx.MissionAcquire(e.ctx, acquireDefaults(engine.AcquireQuery{Owner: fmt.Sprintf("w%d", w)}))
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
					got[m.ID]++
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
		for id, n := range got {
			require.Equal(t, 1, n, "%s leased %d times", id, n)
		}
	})
	pair("HostLockExcludesTheOther", func(t *testing.T, a, b *env) {
		la, okA := a.s.(engine.HostLock)
		lb, okB := b.s.(engine.HostLock)
		require.Equal(t, okA, okB, "both handles are of one backend")
		if !okA {
			return // the backend offers no host lock
		}
		got, err := la.TryLeaderLock()
		require.NoError(t, err)
		require.True(t, got)
		got, err = lb.TryLeaderLock()
		require.NoError(t, err)
		require.False(t, got, "a holds it")
		require.NoError(t, la.ReleaseLeaderLock())
		got, err = lb.TryLeaderLock()
		require.NoError(t, err)
		require.True(t, got, "released by a: b takes it")
		got, err = la.TryLeaderLock()
		require.NoError(t, err)
		require.False(t, got)
	})
}
