package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/stretchr/testify/require"
)

// The lease.acquired event's data is written from a struct; its JSON is byte for byte what the
// map it replaced produced (keys sorted), with and without a leader.
func TestAcquiredData_SameJSONAsTheMap(t *testing.T) {
	at := time.UnixMilli(1_800_000_000_123).UTC()
	m := map[string]any{"to": domain.StateRunning, "owner": "agent", "profile": "prof", "expires_at": at, "resumed": true}
	want, err := json.Marshal(m)
	require.NoError(t, err)
	got, err := json.Marshal(&acquiredData{ExpiresAt: at, Owner: "agent", Profile: "prof", Resumed: true, To: domain.StateRunning})
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
	require.Equal(t, string(want), string(got))

	m["leader"], m["leader_epoch"] = "srv-1", int64(7)
	want, err = json.Marshal(m)
	require.NoError(t, err)
	got, err = json.Marshal(&acquiredByLeader{ExpiresAt: at, Leader: "srv-1", LeaderEpoch: 7, Owner: "agent",
		Profile: "prof", Resumed: true, To: domain.StateRunning})
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}
