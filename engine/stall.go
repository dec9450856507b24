package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// EventStalled is the event type of Stalled.
const EventStalled = "agent.stalled"

// StallNotice says a managed agent has written nothing for a while though its process is
// alive: Idle is how long (so far), Threshold the profile's stall_threshold that was crossed,
// StopAt the silence at which the scheduler stops it (stall_timeout; 0 = never), Pinged
// whether agent.ping could be sent (runtime ndjson only).
type StallNotice struct {
	Profile   string
	Idle      time.Duration
	Threshold time.Duration
	StopAt    time.Duration
	Pinged    bool
}

// Sentence is the notice for people, the one text get_mission, events and logs show:
// "no output for 10m0s (profile claude, stall_threshold 10m0s): pinged; stopped if still
// silent at 20m0s (stall_timeout)".
func (n StallNotice) Sentence() string {
	ping := "not pinged (only ndjson agents read agent.ping)"
	if n.Pinged {
		ping = "pinged (agent.ping)"
	}
	stop := "; never stopped for silence (stall_timeout off)"
	if n.StopAt > 0 {
		stop = fmt.Sprintf("; stopped with failure kind timeout if still silent at %s (stall_timeout)", n.StopAt)
	}
	return fmt.Sprintf(stallPrefix+"no output for %s (profile %s, stall_threshold %s): %s%s",
		roundIdle(n.Idle), n.Profile, n.Threshold, ping, stop)
}

// Stalled records that a running attempt went silent (StallNotice): the mission's progress
// shows the notice (until the agent reports progress again) and an agent.stalled event
// carries it. It neither extends the lease nor counts as contact from the agent. Fenced by
// the epoch.
func (e *Engine) Stalled(ctx context.Context, f domain.Fence, n StallNotice) error {
	msg := n.Sentence()
	return e.update(ctx, "", func(o *op) error {
		m, err := o.fenced(f)
		if err != nil {
			return err
		}
		g := Guard{State: m.State, Epoch: m.Lease.Epoch}
		var pct *float64
		if m.Progress != nil {
			pct = m.Progress.Percent
		}
		m.Progress = &domain.Progress{Percent: pct, Message: msg, At: o.now}
		m.UpdatedAt = o.now
		if err := o.save(&m, g); err != nil {
			return err
		}
		return o.emit(EventStalled, &m, "", map[string]any{"message": msg, "idle_seconds": n.Idle.Seconds(),
			"stall_threshold_seconds": n.Threshold.Seconds(), "stall_timeout_seconds": n.StopAt.Seconds(), "pinged": n.Pinged})
	})
}

// roundIdle rounds a silence for people: to the second from 10 s on, else to 10 ms.
func roundIdle(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(10 * time.Millisecond)
}

// stallPrefix starts every stall notice (Sentence), so a mission's progress tells whether its
// agent is silent past its stall threshold (StallShown).
const stallPrefix = "stalled: "

// maxStalledListed bounds the missions StalledMissions reads (the running ones).
const maxStalledListed = 500

// StallShown reports whether a mission's progress is a stall notice: its agent has written
// nothing since it crossed its stall threshold (any progress it reports replaces the notice).
func StallShown(p *domain.Progress) bool {
	return p != nil && strings.HasPrefix(p.Message, stallPrefix)
}

// StalledMissions returns the ids of the leased or running missions whose agent is silent
// past its stall threshold (StallShown), for status; at most maxStalledListed running
// missions are looked at.
func (e *Engine) StalledMissions(ctx context.Context) ([]string, error) {
	ms, err := e.ListMissions(ctx, MissionFilter{States: []domain.MissionState{domain.StateLeased, domain.StateRunning}, Limit: maxStalledListed})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, m := range ms {
		if StallShown(m.Progress) {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}
