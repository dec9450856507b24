package e2e_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLeader_SIGKILLSameHostSuccessorLeadsBeforeTheLeaseExpires: two daemons on one host
// share a data dir; the leader holds the host's leader lock (flock on scheduler.db-leader).
// SIGKILL of the leader releases it in the kernel, and the other daemon takes the lease on
// the strength of that proof: its leader.elected event says the previous leader is gone and
// comes before the dead leader's lease would have expired (a long lease, so that no
// machine load can make waiting for expiry look like a takeover).
func TestLeader_SIGKILLSameHostSuccessorLeadsBeforeTheLeaseExpires(t *testing.T) {
	const lease = 60 * time.Second
	e := newXEnv(t, xsettings{LeaderLease: lease})
	a := e.daemon("daemon-a")
	e.waitUntil("a leads", func() bool { return leaderPID(e.leader().Owner) == a.pid() })
	b := e.daemon("daemon-b")
	e.waitUntil("b runs as a follower", func() bool {
		return len(b.logText()) > 0 && leaderPID(e.leader().Owner) == a.pid()
	})
	before := e.leader()
	require.True(t, before.HostLocked, "the leader holds the host lock")
	a.kill()
	e.waitUntil("b leads", func() bool { return leaderPID(e.leader().Owner) == b.pid() })

	var elected []map[string]any
	var at []time.Time
	for _, ev := range e.events() {
		if ev.Type == "leader.elected" {
			var d map[string]any
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			elected, at = append(elected, d), append(at, ev.At)
		}
	}
	require.Len(t, elected, 2, "a, then b")
	last := elected[1]
	require.Equal(t, before.Owner, last["previous_owner"])
	require.Contains(t, last["previous_gone"], "host lock released")
	expiry, err := time.Parse(time.RFC3339Nano, last["previous_expires_at"].(string))
	require.NoError(t, err)
	require.True(t, at[1].Before(expiry), "b was elected at %s, before a's lease expired at %s", at[1], expiry)
	require.NoError(t, b.stop())
}
