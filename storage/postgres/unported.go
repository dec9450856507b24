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

func (t *txn) VoyageGet(ctx context.Context, id string) (r0 domain.Voyage, err error) {
	err = notYet("VoyageGet")
	return
}

func (t *txn) VoyageByIdempotencyKey(ctx context.Context, key string) (r0 domain.Voyage, err error) {
	err = notYet("VoyageByIdempotencyKey")
	return
}

func (t *txn) VoyageList(ctx context.Context, states []domain.VoyageState, limit int) (r0 []domain.Voyage, err error) {
	err = notYet("VoyageList")
	return
}

func (t *txn) VoyageCounts(ctx context.Context) (r0 map[domain.VoyageState]int, err error) {
	err = notYet("VoyageCounts")
	return
}

func (t *txn) EscalationCount(ctx context.Context, state string) (r0 int, err error) {
	err = notYet("EscalationCount")
	return
}

func (t *txn) AgentCount(ctx context.Context) (r0 int, err error) { err = notYet("AgentCount"); return }

func (t *txn) EventList(ctx context.Context, f engine.EventFilter) (r0 []domain.Event, err error) {
	err = notYet("EventList")
	return
}

func (t *txn) EscalationGet(ctx context.Context, id string) (r0 domain.Escalation, err error) {
	err = notYet("EscalationGet")
	return
}

func (t *txn) EscalationList(ctx context.Context, f engine.EscalationFilter) (r0 []domain.Escalation, err error) {
	err = notYet("EscalationList")
	return
}

func (t *txn) AttemptList(ctx context.Context, missionID string) (r0 []domain.Attempt, err error) {
	err = notYet("AttemptList")
	return
}

func (t *txn) AttemptOutcomes(ctx context.Context) (r0 []engine.OutcomeCount, err error) {
	err = notYet("AttemptOutcomes")
	return
}

func (t *txn) LandingList(ctx context.Context, missionID string) (r0 []domain.Landing, err error) {
	err = notYet("LandingList")
	return
}

func (t *txn) WorkspaceGet(ctx context.Context, missionID string, attempt int) (r0 engine.WorkspaceRecord, err error) {
	err = notYet("WorkspaceGet")
	return
}

func (t *txn) WorkspaceList(ctx context.Context, missionID string) (r0 []engine.WorkspaceRecord, err error) {
	err = notYet("WorkspaceList")
	return
}

func (t *txn) AgentList(ctx context.Context) (r0 []domain.Agent, err error) {
	err = notYet("AgentList")
	return
}

func (t *txn) AgentsSeenSince(ctx context.Context, since time.Time) (r0 []domain.Agent, err error) {
	err = notYet("AgentsSeenSince")
	return
}

func (t *txn) WaveLatest(ctx context.Context) (r0 domain.Wave, err error) {
	err = notYet("WaveLatest")
	return
}

func (t *txn) HoldList(ctx context.Context) (r0 []engine.Hold, err error) {
	err = notYet("HoldList")
	return
}

func (t *txn) HoldGet(ctx context.Context, missionID string) (r0 engine.Hold, err error) {
	err = notYet("HoldGet")
	return
}

func (t *txn) HoldCounts(ctx context.Context) (r0 map[string]int, err error) {
	err = notYet("HoldCounts")
	return
}

func (t *txn) Paused(ctx context.Context) (r0 bool, err error) { err = notYet("Paused"); return }

func (t *txn) LeaderGet(ctx context.Context) (r0 engine.Leader, err error) {
	err = notYet("LeaderGet")
	return
}

func (t *txn) VoyageInsert(ctx context.Context, v *domain.Voyage) error {
	return notYet("VoyageInsert")
}

func (t *txn) VoyageUpdate(ctx context.Context, v *domain.Voyage, expect domain.VoyageState) error {
	return notYet("VoyageUpdate")
}

func (t *txn) EventAppend(ctx context.Context, e *domain.Event) error { return notYet("EventAppend") }

func (t *txn) EscalationInsert(ctx context.Context, e *domain.Escalation) error {
	return notYet("EscalationInsert")
}

func (t *txn) EscalationUpdate(ctx context.Context, e *domain.Escalation) error {
	return notYet("EscalationUpdate")
}

func (t *txn) AttemptInsert(ctx context.Context, a *domain.Attempt) error {
	return notYet("AttemptInsert")
}

func (t *txn) LandingUpsert(ctx context.Context, l *domain.Landing) error {
	return notYet("LandingUpsert")
}

func (t *txn) WorkspacePut(ctx context.Context, w *engine.WorkspaceRecord) error {
	return notYet("WorkspacePut")
}

func (t *txn) WorkspaceMarkRemoved(ctx context.Context, missionID string, attempt int, at time.Time) error {
	return notYet("WorkspaceMarkRemoved")
}

func (t *txn) AgentUpsert(ctx context.Context, a *domain.Agent) error { return notYet("AgentUpsert") }

func (t *txn) WaveInsert(ctx context.Context, w *domain.Wave) error { return notYet("WaveInsert") }

func (t *txn) HoldUpsert(ctx context.Context, h *engine.Hold) error { return notYet("HoldUpsert") }

func (t *txn) HoldDelete(ctx context.Context, missionID string) error { return notYet("HoldDelete") }

func (t *txn) SetPaused(ctx context.Context, paused bool) error { return notYet("SetPaused") }

func (tx *txn) LeaderTry(ctx context.Context, t engine.LeaderTake) (r0 engine.Leader, err error) {
	err = notYet("LeaderTry")
	return
}

func (t *txn) LeaderResign(ctx context.Context, owner string, epoch int64) error {
	return notYet("LeaderResign")
}

// ---- end P2 ----

// ---- P3: storage/list.go, storage/metrics.go, storage/notices.go, storage/ratewindows.go, storage/retention.go, storage/tokenlimits.go, storage/usage.go ----

// ---- end P3 ----
