package storetest

import (
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
