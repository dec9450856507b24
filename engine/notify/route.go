package notify

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Wants reports whether s takes message m (its event and voyage filters).
func (s Sink) Wants(m Message) bool {
	if len(s.Events) > 0 && !slices.Contains(s.Events, m.Type) {
		return false
	}
	return len(s.Voyages) == 0 || slices.Contains(s.Voyages, m.VoyageID)
}

// Route returns the engine.Route that turns an event into one notice per sink that wants
// it, skipping events older than maxAge at now() (zero: none skipped); skipped counts them.
func Route(sinks []Sink, maxAge time.Duration, now func() time.Time, skipped *int) engine.Route {
	return func(ev domain.Event) []engine.Notice {
		m, ok := Translate(ev)
		if !ok {
			return nil
		}
		if maxAge > 0 && now().Sub(ev.At) > maxAge {
			*skipped++
			return nil
		}
		var out []engine.Notice
		for _, s := range sinks {
			if !s.Wants(m) {
				continue
			}
			m.ID = DeliveryID(ev.Seq, s.Name)
			body, err := json.Marshal(m)
			if err != nil { // the event's data is not JSON: send the message without it
				m.Data = nil
				body, _ = json.Marshal(m)
			}
			out = append(out, engine.Notice{Sink: s.Name, Type: m.Type, Body: body})
		}
		return out
	}
}
