package storage

import (
	"context"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// sqlMetricCounts is a metrics scrape's read of the stored rows, one statement of (kind, key,
// n) rows. Every part reads a counter table or a partial index of live work only, so its cost
// follows the live work (queue, holds, running agents), not the history:
//   - mission: the mission_counts counters (kept by trigger with the missions);
//   - voyage: the voyage_counts counters;
//   - hold: the holds (at most one planning step's worth) of missions still waiting, as
//     HoldCounts, each hold's mission looked up by primary key in a correlated EXISTS, so
//     that the holds drive the read. With a join SQLite's planner may walk missions_state_id
//     for state completed (every landed mission ever) to find the few completed missions
//     whose landing waits: a plain JOIN did so, and so did CROSS JOIN in -race builds;
//   - landing: the unsettled landings through missions_landing_queue and
//     missions_landing_awaiting (partial indexes of those landing states only);
//   - live: leased and running missions per profile through missions_live;
//   - escalation: open escalations through escalations_state.
const sqlMetricCounts = `SELECT 'mission', state, n FROM mission_counts
UNION ALL SELECT 'voyage', state, n FROM voyage_counts WHERE n > 0
UNION ALL SELECT 'hold', h.code, count(*) FROM holds AS h
 WHERE EXISTS (SELECT 1 FROM missions AS m WHERE m.id = h.mission_id
   AND (m.state IN ('pending','interrupted')
    OR (m.state = 'completed' AND m.landing IN ('pending','review','approved','waiting','approval','repair'))))
 GROUP BY h.code
UNION ALL SELECT 'landing', landing, count(*) FROM missions INDEXED BY missions_landing_queue
 WHERE state = 'completed' AND landing IN ('pending','approved','review','waiting') GROUP BY landing
UNION ALL SELECT 'landing', landing, count(*) FROM missions INDEXED BY missions_landing_awaiting
 WHERE state = 'completed' AND landing IN ('approval','repair') GROUP BY landing
UNION ALL SELECT 'live', profile, count(*) FROM missions INDEXED BY missions_live
 WHERE state IN ('leased','running') GROUP BY profile
UNION ALL SELECT 'escalation', 'open', count(*) FROM escalations WHERE state = 'open'`

func (t *txn) MetricCounts(ctx context.Context) (engine.MetricCounts, error) {
	out := engine.MetricCounts{Missions: map[domain.MissionState]int{}, Voyages: map[domain.VoyageState]int{},
		Holds: map[string]int{}, Landings: map[domain.LandingState]int{}, Live: map[string]int{}}
	rows, err := t.q.query(ctx, sqlMetricCounts)
	if err != nil {
		return out, translate(err, "metric counts")
	}
	defer rows.Close()
	for rows.Next() {
		var kind, key string
		var n int
		if err := rows.Scan(&kind, &key, &n); err != nil {
			return out, translate(err, "metric counts")
		}
		switch kind {
		case "mission":
			out.Missions[domain.MissionState(key)] = n
		case "voyage":
			out.Voyages[domain.VoyageState(key)] = n
		case "hold":
			out.Holds[key] = n
		case "landing":
			out.Landings[domain.LandingState(key)] = n
		case "live":
			out.Live[key] = n
		case "escalation":
			out.OpenEscalations = n
		}
	}
	return out, translate(rows.Err(), "metric counts")
}
