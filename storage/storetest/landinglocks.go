package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// exerciseLandingLocks covers LandingLockTry, LandingLockRelease and LandingLocks (cluster
// mode's landing locks: one row per target, held by one node until it expires).
func exerciseLandingLocks(t *testing.T, open Opener) {
	const target = "/repo:main"
	lock := func(node string, at time.Time) engine.LandingLock {
		return engine.LandingLock{Target: target, Node: node, ExpiresAt: at.Add(time.Minute)}
	}
	group(t, "LandingLockTry", func(t *testing.T) {
		run(t, "TakesAFreeTarget", open, func(t *testing.T, e *env) {
			require.True(t, lockTry(e, lock("a", t0), t0))
			require.Equal(t, []engine.LandingLock{lock("a", t0)}, lockList(e, t0))
		})
		run(t, "AnotherNodeCannotTakeALiveLock", open, func(t *testing.T, e *env) {
			require.True(t, lockTry(e, lock("a", t0), t0))
			at := t0.Add(59 * time.Second)
			require.False(t, lockTry(e, lock("b", at), at), "a's lock runs until t0+1m")
			require.Equal(t, []engine.LandingLock{lock("a", t0)}, lockList(e, at), "a's row is unchanged")
		})
		run(t, "TakesAnExpiredLockOver", open, func(t *testing.T, e *env) {
			require.True(t, lockTry(e, lock("a", t0), t0))
			at := t0.Add(time.Minute)
			require.True(t, lockTry(e, lock("b", at), at), "a's lock expired at t0+1m")
			require.Equal(t, []engine.LandingLock{lock("b", at)}, lockList(e, at))
			require.False(t, lockTry(e, lock("a", at), at), "a cannot take it back while b's is live")
		})
		run(t, "TheHolderRenews", open, func(t *testing.T, e *env) {
			require.True(t, lockTry(e, lock("a", t0), t0))
			at := t0.Add(30 * time.Second)
			require.True(t, lockTry(e, lock("a", at), at))
			require.Equal(t, []engine.LandingLock{lock("a", at)}, lockList(e, at), "its expiry moved")
		})
		run(t, "TargetsAreIndependent", open, func(t *testing.T, e *env) {
			require.True(t, lockTry(e, lock("a", t0), t0))
			other := engine.LandingLock{Target: "/repo:release", Node: "b", ExpiresAt: t0.Add(time.Minute)}
			require.True(t, lockTry(e, other, t0))
			require.Equal(t, []engine.LandingLock{lock("a", t0), other}, lockList(e, t0), "by target")
		})
	})
	group(t, "LandingLockRace", func(t *testing.T) {
		run(t, "OneOfManyNodesTakesAFreeOrExpiredTarget", open, func(t *testing.T, e *env) {
			const nodes = 8
			for round, at := range []time.Time{t0, t0.Add(time.Minute)} { // free, then a's expired
				if round == 1 {
					require.True(t, lockTry(e, lock("a", t0), t0))
				}
				var wg sync.WaitGroup
				won := make([]bool, nodes)
				errs := make([]error, nodes)
				for n := range nodes {
					wg.Go(func() {
						errs[n] = e.s.Update(e.ctx, func(tx engine.Tx) error {
							var err error
							won[n], err = tx.LandingLockTry(e.ctx, lock(fmt.Sprintf("n%d-%d", round, n), at), at)
							return err
						})
					})
				}
				wg.Wait()
				winners := 0
				for n := range nodes {
					require.NoError(t, errs[n])
					if won[n] {
						winners++
						require.Equal(t, []engine.LandingLock{lock(fmt.Sprintf("n%d-%d", round, n), at)}, lockList(e, at))
					}
				}
				require.Equal(t, 1, winners, "round %d: exactly one node holds the target", round)
				holder := lockList(e, at)[0].Node
				e.update(func(tx engine.Tx) error { return tx.LandingLockRelease(e.ctx, target, holder) })
			}
		})
	})
	group(t, "LandingLockRelease", func(t *testing.T) {
		run(t, "OnlyTheHolderReleases", open, func(t *testing.T, e *env) {
			require.True(t, lockTry(e, lock("a", t0), t0))
			e.update(func(tx engine.Tx) error { return tx.LandingLockRelease(e.ctx, target, "b") })
			e.update(func(tx engine.Tx) error { return tx.LandingLockRelease(e.ctx, "/other:main", "a") })
			require.Equal(t, []engine.LandingLock{lock("a", t0)}, lockList(e, t0), "a non-holder's release does nothing")
			require.False(t, lockTry(e, lock("b", t0), t0))
			e.update(func(tx engine.Tx) error { return tx.LandingLockRelease(e.ctx, target, "a") })
			require.Empty(t, lockList(e, t0))
			require.True(t, lockTry(e, lock("b", t0), t0), "a released target is free at once")
		})
	})
	group(t, "LandingLocks", func(t *testing.T) {
		run(t, "OnlyLiveLocks", open, func(t *testing.T, e *env) {
			require.Empty(t, lockList(e, t0))
			require.True(t, lockTry(e, lock("a", t0), t0))
			require.Len(t, lockList(e, t0.Add(time.Minute-time.Millisecond)), 1)
			require.Empty(t, lockList(e, t0.Add(time.Minute)), "a lock is not live at its expiry")
		})
	})
}

func lockTry(e *env, l engine.LandingLock, now time.Time) bool {
	e.t.Helper()
	var held bool
	e.update(func(tx engine.Tx) error {
		var err error
		held, err = tx.LandingLockTry(e.ctx, l, now)
		return err
	})
	return held
}

func lockList(e *env, now time.Time) []engine.LandingLock {
	e.t.Helper()
	var ls []engine.LandingLock
	e.view(func(r engine.Reader) error {
		var err error
		ls, err = r.LandingLocks(e.ctx, now)
		return err
	})
	for i := range ls {
		ls[i].ExpiresAt = normTime(ls[i].ExpiresAt)
	}
	return ls
}
