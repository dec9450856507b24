package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

const day = 24 * time.Hour

// landed completes a running mission's attempt and records it landed.
func (b *bundle) landed(m domain.Mission) domain.Mission {
	b.t.Helper()
	_, err := b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(b.t, err)
	m = b.get(m.ID)
	_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: m.ID, Attempt: m.Attempt, Status: "landed"}, domain.LandingLanded)
	require.NoError(b.t, err)
	return b.get(m.ID)
}

func (b *bundle) exists(id string) bool {
	b.t.Helper()
	_, err := b.e.GetMission(b.ctx, id)
	if err == nil {
		return true
	}
	require.ErrorIs(b.t, err, domain.ErrNotFound)
	return false
}

func (b *bundle) prune(before time.Time, dry bool) engine.PruneReport {
	b.t.Helper()
	rep, err := b.e.PruneHistory(b.ctx, engine.PruneOptions{Before: before, Batch: 2, Pause: time.Millisecond, DryRun: dry, Actor: "test"})
	require.NoError(b.t, err)
	return rep
}

// Retention prunes finished missions older than the cutoff with their events and records,
// and keeps every mission the rule protects: too recent, of an unfinished voyage, one an
// unfinished mission depends on, one an open escalation names, one whose landing waits. A
// finished voyage goes with its missions. The event log still replays to the tables, a dry
// run changes nothing, and small batches get through more candidates than one batch holds.
func TestPruneHistory_PrunesFinishedKeepsWhatIsStillNeeded(t *testing.T) {
	b := setup(t)
	old := []domain.Mission{b.inState(domain.StateFailed), b.inState(domain.StateCancelled)}
	landedOld := b.landed(b.acquire(b.create(engine.MissionSpec{Title: "landed"}).ID, true))

	upstream := b.landed(b.acquire(b.create(engine.MissionSpec{Title: "upstream", WriteArea: []string{"up/**"}}).ID, true))
	downstream := b.create(engine.MissionSpec{Title: "downstream", WriteArea: []string{"down/**"}, DependsOn: []string{upstream.ID}})

	escalated := b.inState(domain.StateFailed)
	_, err := b.e.Escalate(b.ctx, engine.EscalationSpec{MissionIDs: []string{escalated.ID}, Reason: "look", DecisionRequired: "decide"}, "test")
	require.NoError(t, err)
	waiting := b.acquire(b.create(engine.MissionSpec{Title: "waits for landing", WriteArea: []string{"wait/**"}}).ID, true)
	_, err = b.e.Complete(b.ctx, waiting.Fence(), domain.WorkerResult{Summary: "done"})
	require.NoError(t, err)

	open, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "open voyage", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"va/**"}}, {Key: "b", Title: "b", WriteArea: []string{"vb/**"}}}}, "test")
	require.NoError(t, err)
	inOpen := b.landed(b.acquire(open.IDs["a"], true))

	done, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "finished voyage", Missions: []engine.MissionSpec{
		{Key: "x", Title: "x", WriteArea: []string{"vx/**"}}, {Key: "y", Title: "y", WriteArea: []string{"vy/**"}}}}, "test")
	require.NoError(t, err)
	_, err = b.e.CancelVoyage(b.ctx, done.Voyage.ID, "enough", "test")
	require.NoError(t, err)

	b.clock.Advance(31 * day)
	recent := b.inState(domain.StateCompleted)
	cutoff := b.clock.Now().Add(-30 * day)

	before, err := b.e.Summary(b.ctx, 5)
	require.NoError(t, err)
	dry := b.prune(cutoff, true)
	require.True(t, dry.DryRun)
	after, err := b.e.Summary(b.ctx, 5)
	require.NoError(t, err)
	require.Equal(t, before.Counts, after.Counts, "a dry run deletes nothing")
	for _, m := range append(old, landedOld) {
		require.True(t, b.exists(m.ID))
	}

	rep := b.prune(cutoff, false)
	gone := []string{old[0].ID, old[1].ID, landedOld.ID, done.IDs["x"], done.IDs["y"]}
	require.ElementsMatch(t, gone, rep.Missions)
	require.ElementsMatch(t, dry.Missions, rep.Missions, "the dry run named what the run removed")
	require.Equal(t, dry.Removed, rep.Removed, "the dry run counted what the run removed")
	require.Equal(t, 5, rep.Removed.Missions)
	require.Equal(t, 1, rep.Removed.Voyages)
	require.Greater(t, rep.Removed.Events, 6)
	require.Greater(t, rep.Batches, 3, "batches of 2 candidates")
	for _, id := range gone {
		require.False(t, b.exists(id), id)
		evs, err := b.e.Events(b.ctx, engine.EventFilter{MissionID: id, Limit: 10})
		require.NoError(t, err)
		require.Empty(t, evs, "the events of %s went with it", id)
	}
	_, err = b.e.VoyageStatus(b.ctx, done.Voyage.ID)
	require.ErrorIs(t, err, domain.ErrNotFound, "the finished voyage went with its missions")
	for _, m := range []domain.Mission{upstream, downstream, escalated, waiting, inOpen, recent} {
		require.True(t, b.exists(m.ID), m.Title)
	}
	require.Equal(t, 1, rep.Kept[engine.KeepDependent])
	require.Equal(t, 1, rep.Kept[engine.KeepEscalation])
	require.Equal(t, 1, rep.Kept[engine.KeepLanding])
	require.Equal(t, 1, rep.Kept[engine.KeepVoyageUnfinished])
	b.verifyReplay()

	pruned, err := b.e.Events(b.ctx, engine.EventFilter{Types: []string{"history.pruned"}, Limit: 100})
	require.NoError(t, err)
	require.NotEmpty(t, pruned, "each batch that removed something left a record")

	again := b.prune(cutoff, false)
	require.Empty(t, again.Missions, "nothing more to prune")
	b.verifyReplay()
}

// A mission retried after it failed is not finished any more, whatever its age: it stays.
func TestPruneHistory_RetriedMissionStays(t *testing.T) {
	b := setup(t)
	m := b.inState(domain.StateFailed)
	b.clock.Advance(40 * day)
	_, err := b.e.Retry(b.ctx, m.ID, "test")
	require.NoError(t, err)
	rep := b.prune(b.clock.Now().Add(-30*day), false)
	require.Empty(t, rep.Missions)
	require.True(t, b.exists(m.ID))
	b.verifyReplay()
}

// The cutoff is required: a zero time is refused naming the field, nothing is deleted.
func TestPruneHistory_RefusesZeroCutoff(t *testing.T) {
	b := setup(t)
	m := b.inState(domain.StateCompleted)
	_, err := b.e.PruneHistory(b.ctx, engine.PruneOptions{})
	var fe *domain.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "before", fe.Field)
	require.True(t, b.exists(m.ID))
}

// Once its escalation is resolved, a failed mission goes and takes the escalation with it;
// an escalation that also names a mission still stored stays; a review mission still
// pending keeps its landed subject.
func TestPruneHistory_ResolvedEscalationsAndSubjects(t *testing.T) {
	b := setup(t)
	alone := b.inState(domain.StateFailed)
	shared := b.inState(domain.StateFailed)
	other := b.inState(domain.StatePending)
	e1, err := b.e.Escalate(b.ctx, engine.EscalationSpec{MissionIDs: []string{alone.ID}, Reason: "r", DecisionRequired: "d"}, "test")
	require.NoError(t, err)
	e2, err := b.e.Escalate(b.ctx, engine.EscalationSpec{MissionIDs: []string{shared.ID, other.ID}, Reason: "r", DecisionRequired: "d"}, "test")
	require.NoError(t, err)
	for _, id := range []string{e1.ID, e2.ID} {
		_, err := b.e.ResolveEscalation(b.ctx, id, engine.ResolveAcknowledge, "seen", "test")
		require.NoError(t, err)
	}
	subject := b.landed(b.acquire(b.create(engine.MissionSpec{Title: "subject", WriteArea: []string{"s/**"}}).ID, true))
	review := b.create(engine.MissionSpec{Title: "review it", Kind: domain.KindReview, SubjectID: subject.ID, WriteArea: []string{"r/**"}})

	b.clock.Advance(31 * day)
	rep := b.prune(b.clock.Now().Add(-30*day), false)
	require.ElementsMatch(t, []string{alone.ID, shared.ID}, rep.Missions)
	require.Equal(t, 1, rep.Removed.Escalations, "only the escalation that concerned nothing else")
	left, err := b.e.Escalations(b.ctx, engine.EscalationFilter{})
	require.NoError(t, err)
	require.Len(t, left, 1)
	require.Equal(t, e2.ID, left[0].ID)
	require.True(t, b.exists(subject.ID), "a pending review keeps its subject")
	require.True(t, b.exists(review.ID))
	require.Equal(t, 1, rep.Kept[engine.KeepChild])
	b.verifyReplay()
}
