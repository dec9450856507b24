package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Replayed is a mission's state rebuilt from the event log alone.
type Replayed struct {
	State    domain.MissionState
	Epoch    int64
	Attempt  int
	Priority int
	Landing  domain.LandingState
	Purged   bool
}

// eventData is the part of an event's data replay reads.
type eventData struct {
	From     domain.MissionState `json:"from"`
	To       domain.MissionState `json:"to"`
	Priority *int                `json:"priority"`
	Landing  domain.LandingState `json:"landing"`
}

// Replay rebuilds every mission's state, epoch, attempt, priority and landing from events in
// sequence order. Every state change is an event carrying its target state (and, except for
// acquires, its source state, which must match what replay has so far); an event that does
// not fit is an error naming it.
func Replay(events []domain.Event) (map[string]Replayed, error) {
	out := map[string]Replayed{}
	for _, ev := range events {
		if ev.MissionID == "" {
			continue
		}
		if err := replayOne(out, ev); err != nil {
			return out, fmt.Errorf("event %d (%s of %s): %w", ev.Seq, ev.Type, ev.MissionID, err)
		}
	}
	return out, nil
}

func replayOne(out map[string]Replayed, ev domain.Event) error {
	var d eventData
	if len(ev.Data) > 0 && ev.Data[0] == '{' {
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
	}
	r, seen := out[ev.MissionID]
	switch ev.Type {
	case "mission.created":
		if seen {
			return fmt.Errorf("created twice")
		}
		r = Replayed{State: d.To, Landing: domain.LandingNone}
	case "mission.purged":
		r.Purged = true
	case "lease.acquired":
		if !r.State.Runnable() {
			return fmt.Errorf("acquired while %s", r.State)
		}
	default:
		if !seen {
			return fmt.Errorf("event before mission.created")
		}
	}
	if d.From != "" && d.From != r.State {
		return fmt.Errorf("moves from %s but the mission is %s", d.From, r.State)
	}
	if d.To != "" {
		r.State = d.To
	}
	if d.Priority != nil {
		r.Priority = *d.Priority
	}
	if d.Landing != "" {
		r.Landing = d.Landing
	}
	r.Epoch, r.Attempt = ev.Epoch, ev.Attempt
	out[ev.MissionID] = r
	return nil
}

// VerifyReplay replays the whole event log and compares it with the missions table; it
// returns one line per difference (empty: the log and the tables agree).
func (e *Engine) VerifyReplay(ctx context.Context) ([]string, error) {
	var diffs []string
	err := e.view(ctx, func(r Reader) error {
		var events []domain.Event
		for after := int64(0); ; {
			page, err := r.EventList(ctx, EventFilter{AfterSeq: after, Limit: 10000})
			if err != nil {
				return err
			}
			events = append(events, page...)
			if len(page) < 10000 {
				break
			}
			after = page[len(page)-1].Seq
		}
		replayed, err := Replay(events)
		if err != nil {
			return err
		}
		diffs, err = compareReplay(ctx, r, replayed)
		return err
	})
	return diffs, err
}

func compareReplay(ctx context.Context, r Reader, replayed map[string]Replayed) ([]string, error) {
	var diffs []string
	seen := map[string]bool{}
	for cursor := ""; ; {
		ms, err := r.MissionList(ctx, MissionFilter{Cursor: cursor, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			seen[m.ID] = true
			got, ok := replayed[m.ID]
			want := Replayed{State: m.State, Epoch: m.Lease.Epoch, Attempt: m.Attempt, Priority: m.Priority, Landing: m.Landing}
			if !ok || got.Purged {
				diffs = append(diffs, fmt.Sprintf("%s: in the table but not in the log", m.ID))
				continue
			}
			if got != want {
				diffs = append(diffs, fmt.Sprintf("%s: log says %+v, table says %+v", m.ID, got, want))
			}
		}
		if len(ms) < 1000 {
			break
		}
		cursor = ms[len(ms)-1].ID
	}
	for id, rp := range replayed {
		if !seen[id] && !rp.Purged {
			diffs = append(diffs, fmt.Sprintf("%s: in the log but not in the table", id))
		}
	}
	return diffs, nil
}
