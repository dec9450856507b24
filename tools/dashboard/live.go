package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// The live stream: GET /api/events is a server-sent event stream fed by the engine's change
// hub (every committed change of this process, and ChangeExternal when another process of
// the data dir committed). Each event "change" carries the changes since the last one,
// coalesced; the page re-reads what it shows when one concerns it. Nothing in the browser
// polls: between changes the stream carries only keepalive comments.

// keepAlive is the interval of keepalive comments on an idle stream (proxies and browsers
// drop silent connections).
const keepAlive = 15 * time.Second

// maxChangesPerEvent bounds one event; past it the event says overflow (re-read everything).
const maxChangesPerEvent = 256

// ChangeEvent is the data of one "change" event.
type ChangeEvent struct {
	Changes []ChangeItem `json:"changes,omitempty"`
	// Overflow is true when changes were too many to list: re-read everything shown.
	Overflow bool `json:"overflow,omitempty"`
}

// ChangeItem is one committed change.
type ChangeItem struct {
	Seq       int64  `json:"seq,omitempty"`
	Type      string `json:"type"`
	MissionID string `json:"mission_id,omitempty"`
	VoyageID  string `json:"voyage_id,omitempty"`
}

func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	sub := h.deps.Engine.Hub().Subscribe()
	defer sub.Close()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The first event tells the page the stream is open: it re-reads once, so nothing
	// committed between its first read and the subscription is missed.
	if !send(w, rc, "retry: 2000\nevent: ready\ndata: {}\n\n") {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if !send(w, rc, ": keepalive\n\n") {
				return
			}
		case <-sub.Ready():
			changes, overflow := sub.Take()
			if !send(w, rc, changeFrame(changes, overflow)) {
				return
			}
		}
	}
}

// changeFrame encodes changes as one SSE "change" event.
func changeFrame(changes []engine.Change, overflow bool) string {
	ev := ChangeEvent{Overflow: overflow || len(changes) > maxChangesPerEvent}
	if !ev.Overflow {
		ev.Changes = make([]ChangeItem, len(changes))
		for i, c := range changes {
			ev.Changes[i] = ChangeItem{Seq: c.Seq, Type: c.Type, MissionID: c.MissionID, VoyageID: c.VoyageID}
		}
	}
	b, err := json.Marshal(ev)
	if err != nil { // cannot happen for these types; say overflow so the page re-reads
		b = []byte(`{"overflow":true}`)
	}
	return fmt.Sprintf("event: change\ndata: %s\n\n", b)
}

// send writes one frame and flushes it; false means the client went away.
func send(w http.ResponseWriter, rc *http.ResponseController, frame string) bool {
	if _, err := fmt.Fprint(w, frame); err != nil {
		return false
	}
	return rc.Flush() == nil
}
