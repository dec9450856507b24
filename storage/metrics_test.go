package storage

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A metrics scrape's statement reads counters and partial indexes of live work only: the
// holds are walked and their missions looked up by id (not missions_state_id over every
// completed mission), the landings and live missions through their partial indexes, the
// open escalations through escalations_state. No part scans the missions table or an index
// that holds the history.
func TestMetricCountsPlan_ReadsLiveWorkOnly(t *testing.T) {
	t.Parallel()
	s := openSeeded(t, 20)
	plan := queryPlan(t, s, sqlMetricCounts)
	all := strings.Join(plan, "\n")
	require.Contains(t, all, "SCAN h USING COVERING INDEX holds_code", all)
	require.Contains(t, all, "SEARCH m EXISTS USING INDEX sqlite_autoindex_missions_1 (id=?)", all)
	require.NotContains(t, all, "missions_state_id", all)
	for _, idx := range []string{"missions_landing_queue", "missions_landing_awaiting", "missions_live", "escalations_state"} {
		require.Contains(t, all, idx, all)
	}
	for _, l := range plan {
		if strings.HasPrefix(l, "SCAN ") {
			ok := false
			for _, bounded := range []string{"mission_counts", "voyage_counts", "holds_code", "missions_landing_queue", "missions_landing_awaiting", "missions_live"} {
				ok = ok || strings.Contains(l, bounded)
			}
			require.True(t, ok, "a scan of something that grows with history: %s\n%s", l, all)
		}
	}
}
