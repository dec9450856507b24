package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// exerciseLeader covers LeaderTry, LeaderGet and LeaderResign (the leader lease and its
// epoch), and HostLock when the backend offers it.
func exerciseLeader(t *testing.T, open Opener) {
	group(t, "LeaderGet", func(t *testing.T) {
		run(t, "NobodyLeadsANewStore", open, func(t *testing.T, e *env) {
			l := leader(e)
			require.Empty(t, l.Owner)
			require.False(t, l.HostLocked)
		})
	})

	group(t, "LeaderTry", func(t *testing.T) {
		run(t, "TakesAFreeLease", open, func(t *testing.T, e *env) {
			before := leader(e).Epoch
			l := leaderTry(e, engine.LeaderTake{Owner: "a", Now: t0, TTL: 10 * time.Second, Phase: "planning", HostLocked: true})
			require.Equal(t, "a", l.Owner)
			require.Equal(t, before+1, l.Epoch)
			require.True(t, l.ExpiresAt.Equal(t0.Add(10*time.Second)))
			require.Equal(t, "planning", l.Phase)
			require.True(t, l.HostLocked)
			require.Equal(t, l, leader(e))
		})
		run(t, "RenewalKeepsTheEpoch", open, func(t *testing.T, e *env) {
			l1 := leaderTry(e, engine.LeaderTake{Owner: "a", Now: t0, TTL: 10 * time.Second})
			l2 := leaderTry(e, engine.LeaderTake{Owner: "a", Now: t0.Add(5 * time.Second), TTL: 10 * time.Second, Phase: "landing"})
			require.Equal(t, l1.Epoch, l2.Epoch)
			require.True(t, l2.ExpiresAt.Equal(t0.Add(15*time.Second)))
			require.Equal(t, "landing", l2.Phase)
		})
		run(t, "RenewalAfterExpiryIsANewEpoch", open, func(t *testing.T, e *env) {
			l1 := leaderTry(e, engine.LeaderTake{Owner: "a", Now: t0, TTL: 10 * time.Second})
			l2 := leaderTry(e, engine.LeaderTake{Owner: "a", Now: t0.Add(11 * time.Second), TTL: 10 * time.Second})
			require.Equal(t, "a", l2.Owner)
			require.Greater(t, l2.Epoch, l1.Epoch, "an expired lease renewed is taken anew: whatever the old epoch fenced is stale")
		})
		run(t, "RefusesALiveLeaseOfAnother", open, func(t *testing.T, e *env) {
			l1 := leaderTry(e, engine.LeaderTake{Owner: "a", Now: t0, TTL: 10 * time.Second, Phase: "planning"})
			l2 := leaderTry(e, engine.LeaderTake{Owner: "b", Now: t0.Add(10 * time.Second), TTL: 10 * time.Second, Phase: "idle"})
			require.Equal(t, l1, l2, "b sees a's row, unchanged (a's lease runs to its expiry inclusive)")
		})
		run(t, "TakesAnExpiredLease", open, func(t *testing.T, e *env) {
			l1 := leaderTry(e, engine.LeaderTake{Owner: "a", Now: t0, TTL: 10 * time.Second})
			l2 := leaderTry(e, engine.LeaderTake{Owner: "b", Now: t0.Add(10*time.Second + time.Millisecond), TTL: 10 * time.Second})
			require.Equal(t, "b", l2.Owner)
			require.Equal(t, l1.Epoch+1, l2.Epoch)
		})
		run(t, "TakeoverOfAProvedGoneHostLockedLeader", open, func(t *testing.T, e *env) {
			l1 := leaderTry(e, engine.LeaderTake{Owner: "a", Now: t0, TTL: time.Minute, HostLocked: true})
			l2 := leaderTry(e, engine.LeaderTake{Owner: "b", Now: t0.Add(time.Second), TTL: time.Minute, HostLocked: true, Gone: "a"})
			require.Equal(t, "b", l2.Owner, "a held the host lock that b now holds: a is gone")
			require.Equal(t, l1.Epoch+1, l2.Epoch)
		})
		run(t, "NoTakeoverWithoutTheHostLockOrOfAnother", open, func(t *testing.T, e *env) {
			l1 := leaderTry(e, engine.LeaderTake{Owner: "a", Now: t0, TTL: time.Minute, HostLocked: false})
			l2 := leaderTry(e, engine.LeaderTake{Owner: "b", Now: t0.Add(time.Second), TTL: time.Minute, HostLocked: true, Gone: "a"})
			require.Equal(t, l1, l2, "a did not hold the host lock: another host's leader is not proved gone")
			leaderTry(e, engine.LeaderTake{Owner: "a", Now: t0.Add(2 * time.Second), TTL: time.Minute, HostLocked: true})
			l3 := leaderTry(e, engine.LeaderTake{Owner: "b", Now: t0.Add(3 * time.Second), TTL: time.Minute, HostLocked: true, Gone: "c"})
			require.Equal(t, "a", l3.Owner, "Gone names someone else")
		})
	})

	group(t, "LeaderResign", func(t *testing.T) {
		run(t, "FreesTheLeaseForOthersAtOnce", open, func(t *testing.T, e *env) {
			l1 := leaderTry(e, engine.LeaderTake{Owner: "a", Now: t0, TTL: time.Minute, HostLocked: true})
			e.update(func(tx engine.Tx) error { return tx.LeaderResign(e.ctx, "a", l1.Epoch) })
			require.Empty(t, leader(e).Owner)
			l2 := leaderTry(e, engine.LeaderTake{Owner: "b", Now: t0.Add(time.Second), TTL: time.Minute})
			require.Equal(t, "b", l2.Owner)
			require.Greater(t, l2.Epoch, l1.Epoch)
		})
		run(t, "StaleResignIsIgnored", open, func(t *testing.T, e *env) {
			l1 := leaderTry(e, engine.LeaderTake{Owner: "a", Now: t0, TTL: time.Second})
			l2 := leaderTry(e, engine.LeaderTake{Owner: "b", Now: t0.Add(2 * time.Second), TTL: time.Minute})
			e.update(func(tx engine.Tx) error {
				if err := tx.LeaderResign(e.ctx, "a", l1.Epoch); err != nil {
					return err
				}
				return tx.LeaderResign(e.ctx, "b", l2.Epoch-1)
			})
			require.Equal(t, l2, leader(e))
		})
	})

	group(t, "HostLock", func(t *testing.T) {
		run(t, "TakeHoldReleaseAgain", open, func(t *testing.T, e *env) {
			hl, ok := e.s.(engine.HostLock)
			if !ok {
				return // the backend's processes cannot prove a leader gone; nothing to check
			}
			got, err := hl.TryLeaderLock()
			require.NoError(t, err)
			require.True(t, got)
			got, err = hl.TryLeaderLock()
			require.NoError(t, err)
			require.True(t, got, "held already")
			require.NoError(t, hl.ReleaseLeaderLock())
			require.NoError(t, hl.ReleaseLeaderLock(), "not held: nothing")
			got, err = hl.TryLeaderLock()
			require.NoError(t, err)
			require.True(t, got)
		})
	})
}

func leader(e *env) engine.Leader {
	e.t.Helper()
	var l engine.Leader
	e.view(func(r engine.Reader) error {
		var err error
		l, err = r.LeaderGet(e.ctx)
		return err
	})
	l.ExpiresAt = normTime(l.ExpiresAt)
	return l
}

func leaderTry(e *env, lt engine.LeaderTake) engine.Leader {
	e.t.Helper()
	var l engine.Leader
	e.update(func(tx engine.Tx) error {
		var err error
		l, err = tx.LeaderTry(e.ctx, lt)
		return err
	})
	l.ExpiresAt = normTime(l.ExpiresAt)
	return l
}
