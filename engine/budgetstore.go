package engine

import (
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// RunningUsage is what an attempt in flight has spent so far, as its agent last reported it
// (task.usage is cumulative, so each report replaces the row). It is durable through the
// store seam (Tx.UsageRunningPut), so a restart does not forget it; it goes away when the
// attempt ends (UsageRunningDelete), its usage then counted on the mission. Priced says
// CostUSD came from the price table rather than from the agent.
type RunningUsage struct {
	MissionID string       `json:"mission_id"`
	Attempt   int          `json:"attempt"`
	Epoch     int64        `json:"epoch"`
	VoyageID  string       `json:"voyage_id,omitempty"`
	Profile   string       `json:"profile,omitempty"`
	Model     string       `json:"model,omitempty"`
	Usage     domain.Usage `json:"usage"`
	Priced    bool         `json:"priced,omitempty"`
	UpdatedAt time.Time    `json:"updated_at"`
}

// DayKey is the key of a calendar day in spend_daily: "2006-01-02" of t in loc (UTC when
// loc is nil).
func DayKey(t time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format(time.DateOnly)
}
