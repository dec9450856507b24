package engine

import (
	"errors"
	"slices"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// HoldEventCodes are the hold reason codes whose start is recorded as an event
// ("mission.held"): the waits a person is told about (a spent budget, a rate-limited
// profile), which notifications and the event log show. Other holds change too often to be
// events; their current reason is in get_mission and why_not_running. The rate_limited code
// is matched by its string (the rate-limit windows name it).
var HoldEventCodes = []string{WhyBudget, "rate_limited"}

// EventHeld is the event type recorded when a mission starts waiting for one of
// HoldEventCodes. Its data: code, message, until (when the wait ends, if known), other_id.
const EventHeld = "mission.held"

// holdStarted records EventHeld when a mission's hold moves to a code of HoldEventCodes from
// any other (or from none): once per wait, not each time its message changes.
func (o *op) holdStarted(from, to Reason, missionID string) error {
	if from.Code == to.Code || !slices.Contains(HoldEventCodes, to.Code) {
		return nil
	}
	m, err := o.tx.MissionGet(o.ctx, missionID)
	if err != nil {
		return err
	}
	data := map[string]any{"code": to.Code, "message": to.Message}
	if !to.Until.IsZero() {
		data["until"] = to.Until
	}
	if to.MissionID != "" {
		data["other_id"] = to.MissionID
	}
	return o.emit(EventHeld, &m, "", data)
}

// escalationVoyage is the voyage an escalation's event is recorded under: its own, else the
// voyage of the one mission it concerns (so that the voyage's events, and notifications
// filtered by voyage, include a question about one of its missions).
func (o *op) escalationVoyage(esc domain.Escalation) (string, error) {
	if esc.VoyageID != "" || len(esc.MissionIDs) != 1 {
		return esc.VoyageID, nil
	}
	m, err := o.tx.MissionGet(o.ctx, esc.MissionIDs[0])
	if errors.Is(err, domain.ErrNotFound) {
		return "", nil // an escalation may name a mission that is gone (pruned): no voyage to name
	}
	return m.VoyageID, err
}
