package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
)

func replayed(t *testing.T, s *eventStore, session, last string) ([]string, string, error) {
	t.Helper()
	var got []string
	stream, err := s.ReplayEventsAfter(context.Background(), session, last, func(id string, m json.RawMessage) error {
		got = append(got, id+"="+string(m))
		return nil
	})
	return got, stream, err
}

// TestEventStore_Bounded: replay returns the later events of the same stream and session
// only; the buffer keeps at most its event and byte bounds (older ids become unknown);
// a purged session's ids are unknown.
func TestEventStore_Bounded(t *testing.T) {
	ctx := context.Background()
	s := newEventStore(4, 1<<20)
	id := func(session, stream, msg string) string {
		v, err := s.StoreEvent(ctx, session, stream, json.RawMessage(msg))
		require.NoError(t, err)
		return v
	}
	a1 := id("A", "get", `1`)
	id("A", "post", `2`)
	id("B", "get", `3`)
	a4 := id("A", "get", `4`)
	got, stream, err := replayed(t, s, "A", a1)
	require.NoError(t, err)
	require.Equal(t, "get", stream)
	require.Equal(t, []string{a4 + "=4"}, got, "only A's get stream, after a1")
	_, _, err = replayed(t, s, "B", a1)
	require.ErrorIs(t, err, server.ErrUnknownEventID, "never across sessions")

	id("A", "get", `5`) // a fifth event: a1 leaves the buffer
	_, _, err = replayed(t, s, "A", a1)
	require.ErrorIs(t, err, server.ErrUnknownEventID)
	require.Contains(t, err.Error(), "older than the replay buffer")
	got, _, err = replayed(t, s, "A", a4)
	require.NoError(t, err)
	require.Len(t, got, 1)

	small := newEventStore(100, 10) // bytes bound: 10
	for i := range 5 {
		_, err := small.StoreEvent(ctx, "A", "s", json.RawMessage(fmt.Sprintf(`"%03d"`, i))) // 5 bytes each
		require.NoError(t, err)
	}
	require.Len(t, small.events, 2)
	require.LessOrEqual(t, small.bytes, 10)

	require.NoError(t, s.PurgeSession(ctx, "A"))
	_, _, err = replayed(t, s, "A", a4)
	require.True(t, errors.Is(err, server.ErrUnknownEventID))
	require.Len(t, s.events, 1, "B's event stays")
	_, _, err = replayed(t, s, "A", "x")
	require.ErrorIs(t, err, server.ErrUnknownEventID)
}
