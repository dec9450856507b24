package notify

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// The message types a sink can receive (Sink.Events filters on them).
const (
	TypeEscalationOpened = "escalation.opened"         // from escalation.raised
	TypeVoyageSettled    = "voyage.settled"            // from voyage.completed, voyage.blocked
	TypeMissionFailed    = "mission.failed"            // a mission event that moved it to failed (no retry left)
	TypeBudgetHold       = "mission.budget_hold"       // mission.held with code budget
	TypeRateLimitHold    = "mission.rate_limited"      // mission.held with code rate_limited
	TypeLandingApproval  = "landing.awaiting_approval" // a landing event that moved it to approval
)

// Types lists every message type, in the order docs/notifications.md describes them.
var Types = []string{TypeEscalationOpened, TypeVoyageSettled, TypeMissionFailed, TypeBudgetHold,
	TypeRateLimitHold, TypeLandingApproval}

// Message is the JSON document a sink receives: the webhook's body, the command's stdin.
type Message struct {
	// ID is the same for every delivery attempt of one notice ("<event seq>-<sink>"): a
	// receiver that got it already can ignore a repeat (delivery is at least once).
	ID   string    `json:"id"`
	Type string    `json:"type"`
	At   time.Time `json:"at"`
	// Summary is one sentence for a person (what happened, to what, and why).
	Summary      string `json:"summary"`
	MissionID    string `json:"mission_id,omitempty"`
	VoyageID     string `json:"voyage_id,omitempty"`
	EscalationID string `json:"escalation_id,omitempty"`
	// Event and EventSeq name the engine event it came from (events --follow shows it); Data
	// is that event's data, as recorded.
	Event    string          `json:"event"`
	EventSeq int64           `json:"event_seq"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// eventData is the part of an event's data the translation reads.
type eventData struct {
	To           string   `json:"to"`
	Landing      string   `json:"landing"`
	Reason       string   `json:"reason"`
	Code         string   `json:"code"`
	Message      string   `json:"message"`
	EscalationID string   `json:"escalation_id"`
	Kind         string   `json:"kind"`
	Missions     []string `json:"missions"`
}

// Translate decides whether event ev is one a person is told about, and says it: the one
// place that maps engine events to message types (sink and filters aside).
func Translate(ev domain.Event) (Message, bool) {
	var d eventData
	if len(ev.Data) > 0 {
		_ = json.Unmarshal(ev.Data, &d) // an event whose data does not decode is no notification
	}
	m := Message{At: ev.At, MissionID: ev.MissionID, VoyageID: ev.VoyageID, Event: ev.Type, EventSeq: ev.Seq, Data: ev.Data}
	switch {
	case ev.Type == "escalation.raised":
		m.Type, m.EscalationID = TypeEscalationOpened, d.EscalationID
		if len(d.Missions) == 1 {
			m.MissionID = d.Missions[0]
		}
		m.Summary = fmt.Sprintf("escalation %s opened (%s)%s: %s", d.EscalationID, orNone(d.Kind), about(d.Missions, ev.VoyageID), d.Reason)
	case ev.Type == "voyage.completed" || ev.Type == "voyage.blocked":
		m.Type = TypeVoyageSettled
		m.Summary = fmt.Sprintf("voyage %s settled: %s", ev.VoyageID, strings.TrimPrefix(ev.Type, "voyage."))
	case ev.Type == engine.EventHeld && d.Code == engine.WhyBudget:
		m.Type, m.Summary = TypeBudgetHold, fmt.Sprintf("mission %s waits: %s", ev.MissionID, d.Message)
	case ev.Type == engine.EventHeld && d.Code == "rate_limited":
		m.Type, m.Summary = TypeRateLimitHold, fmt.Sprintf("mission %s waits: %s", ev.MissionID, d.Message)
	case ev.MissionID != "" && d.To == string(domain.StateFailed):
		m.Type, m.Summary = TypeMissionFailed, fmt.Sprintf("mission %s failed for good: %s", ev.MissionID, orNone(d.Reason))
	case strings.HasPrefix(ev.Type, "landing.") && d.Landing == string(domain.LandingApproval):
		m.Type, m.Summary = TypeLandingApproval, fmt.Sprintf("mission %s waits for approval to land: %s", ev.MissionID, orNone(d.Reason))
	default:
		return Message{}, false
	}
	return m, true
}

func orNone(s string) string {
	if s == "" {
		return "no reason recorded"
	}
	return s
}

func about(missions []string, voyageID string) string {
	switch {
	case len(missions) > 0:
		return " about " + strings.Join(missions, ", ")
	case voyageID != "":
		return " about voyage " + voyageID
	}
	return ""
}
