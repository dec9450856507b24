package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// A mission that starts waiting for a budget or a rate-limited profile gets one mission.held
// event for that wait (not one per changed message, none for other holds), with the code,
// the message and the end of the wait; a new wait after another reason gets a new one.
func TestRecordHolds_EventWhenABudgetOrRateLimitWaitStarts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.create(engine.MissionSpec{WriteArea: []string{"a/**"}})
	held := func() []map[string]any {
		evs, err := b.e.Events(b.ctx, engine.EventFilter{MissionID: m.ID, Types: []string{engine.EventHeld}})
		require.NoError(t, err)
		var out []map[string]any
		for _, ev := range evs {
			var d map[string]any
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			out = append(out, d)
		}
		return out
	}
	record := func(r engine.Reason) {
		_, err := b.e.RecordHolds(b.ctx, []engine.Hold{{MissionID: m.ID, Reason: r}})
		require.NoError(t, err)
		b.clock.Advance(time.Second)
	}
	record(engine.Reason{Code: engine.WhySlots, Message: "2 running"})
	require.Empty(t, held(), "an ordinary hold is no event")
	until := b.clock.Now().Add(time.Hour)
	record(engine.Reason{Code: "rate_limited", Message: "profile claude rate-limited until later", Until: until})
	record(engine.Reason{Code: "rate_limited", Message: "profile claude rate-limited until even later", Until: until.Add(time.Minute)})
	got := held()
	require.Len(t, got, 1, "one event for one wait, whatever its message becomes")
	require.Equal(t, "rate_limited", got[0]["code"])
	require.Equal(t, "profile claude rate-limited until later", got[0]["message"])
	require.Equal(t, until.Format(time.RFC3339Nano), got[0]["until"])
	record(engine.Reason{Code: engine.WhyBudget, Message: "voyage v-1's cost budget is spent"})
	record(engine.Reason{Code: engine.WhySlots, Message: "2 running"})
	record(engine.Reason{Code: engine.WhyBudget, Message: "voyage v-1's cost budget is spent"})
	got = held()
	require.Len(t, got, 3)
	require.Equal(t, engine.WhyBudget, got[1]["code"])
	require.Equal(t, engine.WhyBudget, got[2]["code"], "a new wait after another reason is a new event")
}
