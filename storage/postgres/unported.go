package postgres

// Methods of the store seam not ported yet, grouped by the helper porting them. Each deletes
// its methods here as it writes them; this file must be gone before the branch lands.

import (
	"context"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

var _ engine.Tx = (*txn)(nil)
var _ = time.Time{}
var _ = domain.Mission{}

// ---- P1: storage/missions.go, storage/missionset.go, storage/pick.go, storage/graph.go ----

// ---- end P1 ----

// ---- P2: storage/records.go, storage/voyages.go, storage/events.go, storage/escalations.go, storage/holds.go, storage/workspaces.go ----

// ---- end P2 ----

// ---- P3: storage/list.go, storage/metrics.go, storage/notices.go, storage/ratewindows.go, storage/retention.go, storage/tokenlimits.go, storage/usage.go ----

// ---- end P3 ----
