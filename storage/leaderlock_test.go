//go:build unix

package storage

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Two Stores on one file lock like two processes (flock locks belong to the open file).
func openShared(t *testing.T, path string) (*Store, *engine.Engine) {
	t.Helper()
	s, err := Open(context.Background(), path, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s, engine.New(s, engine.Options{DefaultRepository: "/repo"})
}

func electedEvents(t *testing.T, e *engine.Engine) []map[string]any {
	t.Helper()
	evs, err := e.Events(context.Background(), engine.EventFilter{Types: []string{"leader.elected"}})
	require.NoError(t, err)
	var out []map[string]any
	for _, ev := range evs {
		var d map[string]any
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		out = append(out, d)
	}
	return out
}

// A leader holds the host lock; a same-host successor cannot take its live lease, but takes
// it at once (a new epoch, long before expiry) when the leader's lock is gone; a process of
// another host still waits for expiry; a leader that never held the lock is not taken over.
func TestLeaderLock_SameHostSuccessorTakesOverWhenTheHolderIsGone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scheduler.db")
	const ttl = time.Hour // expiry never helps here
	a, engA := openShared(t, path)
	_, engB := openShared(t, path)
	_, engC := openShared(t, path)

	l, err := engA.Leadership(ctx, "h:1:a", ttl, "")
	require.NoError(t, err)
	require.Equal(t, "h:1:a", l.Owner)
	require.True(t, l.HostLocked)
	l, err = engB.Leadership(ctx, "h:2:b", ttl, "")
	require.NoError(t, err)
	require.Equal(t, "h:1:a", l.Owner, "a live leader holding the lock keeps its lease")

	require.NoError(t, a.Close()) // the kernel drops a's lock, as when a process dies
	l, err = engB.Leadership(ctx, "h:2:b", ttl, "")
	require.NoError(t, err)
	require.Equal(t, "h:2:b", l.Owner, "the lock proves a gone: no wait for its lease")
	require.True(t, l.HostLocked)
	ev := electedEvents(t, engB)
	require.Len(t, ev, 2)
	require.Equal(t, "h:1:a", ev[1]["previous_owner"])
	require.Contains(t, ev[1]["previous_gone"], "host lock released")

	// b gives the lock up without resigning (as if it died): c, of another host, cannot
	// prove anything about a process on h and waits for expiry.
	require.NoError(t, engB.Resign(ctx, "nobody", 0)) // not b's lease: only drops b's lock
	l, err = engC.Leadership(ctx, "g:3:c", ttl, "")
	require.NoError(t, err)
	require.Equal(t, "h:2:b", l.Owner, "another host waits for the lease to expire")
	ok, err := a.TryLeaderLock()
	require.ErrorIs(t, err, ErrClosed)
	require.False(t, ok)
}

// A leader that took the lease without the lock (it was held by a process that had lost the
// lease, e.g. one frozen past its expiry) is recorded as such and is not taken over by
// whoever gets the lock next.
func TestLeaderLock_LeaderWithoutTheLockIsNotTakenOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scheduler.db")
	a, _ := openShared(t, path)
	_, engB := openShared(t, path)
	_, engC := openShared(t, path)
	ok, err := a.TryLeaderLock() // a holds the lock but does not lead
	require.NoError(t, err)
	require.True(t, ok)
	l, err := engB.Leadership(ctx, "h:2:b", time.Hour, "")
	require.NoError(t, err)
	require.Equal(t, "h:2:b", l.Owner)
	require.False(t, l.HostLocked)
	require.NoError(t, a.ReleaseLeaderLock())
	l, err = engC.Leadership(ctx, "h:3:c", time.Hour, "")
	require.NoError(t, err)
	require.Equal(t, "h:2:b", l.Owner, "b never held the lock: c proves nothing and waits")
	l, err = engB.Leadership(ctx, "h:2:b", time.Hour, "")
	require.NoError(t, err)
	require.True(t, l.HostLocked, "b takes the lock at its next renewal")
}
