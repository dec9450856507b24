package postgres

import (
	"context"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// sqlMetricCounts is a metrics scrape's read of the stored rows, one statement of (kind, key,
// n) rows, as the SQLite backend's. Every part reads a counter table or a partial index of
// live work only, so its cost follows the live work (queue, holds, running agents), not the
// history:
//   - mission: the mission_counts counters (kept by trigger with the missions:
//     count_mission_state), summed over their shards (at most 64 rows a state);
//   - voyage: the voyage_counts counters, summed likewise;
//   - hold: the holds of missions still waiting, as HoldCounts, each hold's mission looked up
//     by primary key in a correlated EXISTS, so that the holds drive the read;
//   - landing: the unsettled landings, each part's WHERE being that of missions_landing_queue
//     or missions_landing_awaiting literally, so that PostgreSQL can prove the partial index
//     applies (it has no INDEXED BY);
//   - live: leased and running missions per profile (missions_live's WHERE);
//   - escalation: open escalations through escalations_state.
const sqlMetricCounts = `SELECT 'mission', state, sum(n)::bigint FROM mission_counts GROUP BY state
UNION ALL SELECT 'voyage', state, sum(n)::bigint FROM voyage_counts GROUP BY state HAVING sum(n) > 0
UNION ALL SELECT 'hold', h.code, count(*) FROM holds AS h
 WHERE EXISTS (SELECT 1 FROM missions AS m WHERE m.id = h.mission_id
   AND (m.state IN ('pending','interrupted')
    OR (m.state = 'completed' AND m.landing IN ('pending','review','approved','waiting','approval','repair'))))
 GROUP BY h.code
UNION ALL SELECT 'landing', landing, count(*) FROM missions
 WHERE state = 'completed' AND landing IN ('pending','approved','review','waiting') GROUP BY landing
UNION ALL SELECT 'landing', landing, count(*) FROM missions
 WHERE state = 'completed' AND landing IN ('approval','repair') GROUP BY landing
UNION ALL SELECT 'live', profile, count(*) FROM missions
 WHERE state IN ('leased','running') GROUP BY profile
UNION ALL SELECT 'escalation', 'open', count(*) FROM escalations WHERE state = 'open'`

// MetricCounts reads what a metrics scrape shows of the stored rows (see sqlMetricCounts).
func (t *txn) MetricCounts(ctx context.Context) (engine.MetricCounts, error) {
	out := engine.MetricCounts{Missions: map[domain.MissionState]int{}, Voyages: map[domain.VoyageState]int{},
		Holds: map[string]int{}, Landings: map[domain.LandingState]int{}, Live: map[string]int{}}
	rows, err := t.q.Query(ctx, sqlMetricCounts)
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
		metricsAdd(&out, kind, key, n)
	}
	return out, translate(rows.Err(), "metric counts")
}

// metricsAdd files one (kind, key, n) row of sqlMetricCounts into out.
func metricsAdd(out *engine.MetricCounts, kind, key string, n int) {
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
