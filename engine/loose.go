package engine

import (
	"context"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// loosePage and looseScan bound the rows LooseMissions reads: pages of unfinished missions
// (voyage missions among them, which it skips), at most looseScan rows in all.
const (
	loosePage = 500
	looseScan = 5000
)

// LooseMissions returns the missions outside any voyage (created one at a time, by
// `mcp-scheduler go` or create_mission) that have not finished — pending, leased, running,
// interrupted or blocked — oldest first, each as a voyage's listing shows it (MissionLine:
// state, landing, and why it waits, with the same reasons). At most limit (1..1000, else
// 200); more reports that some were left out. It reads unfinished missions only, so its cost
// follows the live work, not the history.
func (e *Engine) LooseMissions(ctx context.Context, limit int) (lines []MissionLine, more bool, err error) {
	if limit <= 0 || limit > 1000 {
		limit = 200
	}
	states := []domain.MissionState{domain.StatePending, domain.StateLeased, domain.StateRunning,
		domain.StateInterrupted, domain.StateBlocked}
	err = e.view(ctx, func(r Reader) error {
		lines, more = nil, false
		paused, live, leader, err := reasonContext(ctx, r)
		if err != nil {
			return err
		}
		cursor := ""
		for scanned := 0; scanned < looseScan; {
			ms, err := r.MissionList(ctx, MissionFilter{States: states, Cursor: cursor, Limit: loosePage})
			if err != nil || len(ms) == 0 {
				return err
			}
			scanned += len(ms)
			cursor = ms[len(ms)-1].ID
			for i := range ms {
				if ms[i].VoyageID != "" {
					continue
				}
				if len(lines) == limit {
					more = true
					return nil
				}
				line, err := missionLine(ctx, r, &ms[i], e.Now(), paused, live, leader)
				if err != nil {
					return err
				}
				lines = append(lines, line)
			}
			if len(ms) < loosePage {
				return nil
			}
		}
		more = true // the scan stopped before the end of the unfinished missions
		return nil
	})
	return lines, more, err
}
