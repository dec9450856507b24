package storetest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseEvents covers EventAppend and EventList.
func exerciseEvents(t *testing.T, open Opener) {
	group(t, "EventAppend", func(t *testing.T) {
		run(t, "SequenceGrowsAndFieldsRoundTrip", open, func(t *testing.T, e *env) {
			e.voyage("v")
			e.add("m", inVoyage("v"))
			in := []*domain.Event{
				{At: e.next(), Type: "mission.created", MissionID: "m", VoyageID: "v", Epoch: 0, Attempt: 0, Actor: "user",
					Data: json.RawMessage(`{"title": "m", "n": [1, 2]}`)},
				{At: e.next(), Type: "mission.leased", MissionID: "m", Epoch: 1, Attempt: 1, Actor: "agent"},
				{At: e.next(), Type: "leader.elected", Actor: "scheduler"},
			}
			e.update(func(tx engine.Tx) error {
				for _, ev := range in {
					if err := tx.EventAppend(e.ctx, ev); err != nil {
						return err
					}
				}
				return nil
			})
			require.Greater(t, in[0].Seq, int64(0))
			require.Greater(t, in[1].Seq, in[0].Seq)
			require.Greater(t, in[2].Seq, in[1].Seq)
			got := events(e, engine.EventFilter{})
			require.Len(t, got, 3)
			for i := range in {
				requireSameEvent(t, *in[i], got[i])
			}
		})
		run(t, "SequenceNeverReusedAfterRollback", open, func(t *testing.T, e *env) {
			first := &domain.Event{At: e.next(), Type: "a"}
			e.update(func(tx engine.Tx) error { return tx.EventAppend(e.ctx, first) })
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				if err := tx.EventAppend(e.ctx, &domain.Event{At: t0, Type: "rolled back"}); err != nil {
					return err
				}
				return errorString("roll back")
			})
			require.ErrorIs(t, err, errorString("roll back"))
			second := &domain.Event{At: e.next(), Type: "b"}
			e.update(func(tx engine.Tx) error { return tx.EventAppend(e.ctx, second) })
			require.Greater(t, second.Seq, first.Seq)
			require.Equal(t, []string{"a", "b"}, eventTypes(events(e, engine.EventFilter{})))
		})
	})

	group(t, "EventList", func(t *testing.T) {
		run(t, "AfterSeqFiltersAndLimit", open, func(t *testing.T, e *env) {
			e.voyage("v")
			e.add("m1", inVoyage("v"))
			e.add("m2")
			var all []*domain.Event
			e.update(func(tx engine.Tx) error {
				for _, ev := range []domain.Event{
					{Type: "mission.created", MissionID: "m1", VoyageID: "v"},
					{Type: "mission.created", MissionID: "m2"},
					{Type: "voyage.opened", VoyageID: "v"},
					{Type: "mission.leased", MissionID: "m1"},
					{Type: "scheduler.paused"},
					{Type: "mission.completed", MissionID: "m1", VoyageID: "v"},
				} {
					ev.At = e.next()
					if err := tx.EventAppend(e.ctx, &ev); err != nil {
						return err
					}
					all = append(all, &ev)
				}
				return nil
			})
			require.Equal(t, []string{"mission.created", "mission.created", "voyage.opened", "mission.leased",
				"scheduler.paused", "mission.completed"}, eventTypes(events(e, engine.EventFilter{})))
			after := events(e, engine.EventFilter{AfterSeq: all[2].Seq})
			require.Equal(t, []int64{all[3].Seq, all[4].Seq, all[5].Seq}, eventSeqs(after))
			require.Equal(t, []int64{all[0].Seq, all[3].Seq, all[5].Seq}, eventSeqs(events(e, engine.EventFilter{MissionID: "m1"})))
			require.Equal(t, []int64{all[0].Seq, all[2].Seq, all[5].Seq}, eventSeqs(events(e, engine.EventFilter{VoyageID: "v"})))
			require.Equal(t, []int64{all[3].Seq, all[5].Seq}, eventSeqs(events(e, engine.EventFilter{MissionID: "m1", AfterSeq: all[0].Seq})))
			require.Equal(t, []int64{all[0].Seq, all[1].Seq, all[5].Seq},
				eventSeqs(events(e, engine.EventFilter{Types: []string{"mission.created", "mission.completed"}})))
			require.Equal(t, []int64{all[5].Seq}, eventSeqs(events(e, engine.EventFilter{VoyageID: "v", Types: []string{"mission.completed"}})))
			require.Equal(t, []int64{all[0].Seq, all[1].Seq}, eventSeqs(events(e, engine.EventFilter{Limit: 2})))
			require.Empty(t, events(e, engine.EventFilter{AfterSeq: all[5].Seq}))
			require.Empty(t, events(e, engine.EventFilter{Types: []string{"nothing"}}))
		})
		run(t, "DefaultLimit", open, func(t *testing.T, e *env) {
			e.update(func(tx engine.Tx) error {
				for range 501 {
					if err := tx.EventAppend(e.ctx, &domain.Event{At: t0, Type: "x"}); err != nil {
						return err
					}
				}
				return nil
			})
			require.Len(t, events(e, engine.EventFilter{}), 500)
			require.Len(t, events(e, engine.EventFilter{Limit: 501}), 501)
		})
	})
}

func events(e *env, f engine.EventFilter) []domain.Event {
	e.t.Helper()
	var out []domain.Event
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.EventList(e.ctx, f)
		return err
	})
	return out
}

func eventTypes(es []domain.Event) []string {
	var out []string
	for _, ev := range es {
		out = append(out, ev.Type)
	}
	return out
}

func eventSeqs(es []domain.Event) []int64 {
	var out []int64
	for _, ev := range es {
		out = append(out, ev.Seq)
	}
	return out
}

func requireSameEvent(t *testing.T, want, got domain.Event) {
	t.Helper()
	for _, ev := range []*domain.Event{&want, &got} {
		ev.At, ev.Data = normTime(ev.At), normJSON(t, ev.Data)
	}
	require.Equal(t, want, got)
}
