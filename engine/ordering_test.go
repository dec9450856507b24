package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Pick order (design brief §3): priority, then live voyage (open, active or blocked), then
// resumed, then FIFO, then id.
func TestOrdering_PriorityVoyageResumedFIFO(t *testing.T) {
	t.Parallel()
	b := setup(t)
	area := func(s string) []string { return []string{s + "/**"} }
	b.create(engine.MissionSpec{Title: "late fifo", WriteArea: area("a")})
	b.clock.Advance(time.Millisecond)
	b.create(engine.MissionSpec{Title: "urgent", Priority: 5, WriteArea: area("b")})
	b.clock.Advance(time.Millisecond)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "one", Title: "voyage one", WriteArea: area("c")},
		{Key: "two", Title: "voyage two", WriteArea: area("d")},
	}}, "test")
	require.NoError(t, err)
	b.clock.Advance(time.Millisecond)
	resumed := b.create(engine.MissionSpec{Title: "resumed", WriteArea: area("e")})

	// Interrupt "resumed" so it carries a checkpoint.
	m := b.acquire(resumed.ID, true)
	require.NoError(t, b.e.Yield(b.ctx, m.Fence(), []byte(`{"at":1}`), "preempted", ""))

	order := func() string {
		t.Helper()
		m, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "a", Start: true})
		require.NoError(t, err)
		return m.Title
	}
	require.Equal(t, "urgent", order())
	// The dispatched voyage is live before any of its missions started (Armada: "active or
	// in-progress"), so its missions go first; then resumed beats fresh, then FIFO.
	require.Equal(t, "voyage one", order()) // activates the voyage
	require.Equal(t, "voyage two", order())
	require.Equal(t, "resumed", order())
	require.Equal(t, "late fifo", order())
	_, err = b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "a"})
	require.ErrorIs(t, err, domain.ErrNoWork)
	require.Len(t, d.IDs, 2)
}

// A freshly dispatched voyage's mission goes before an older standalone mission of the same
// priority (Armada's rule; a fresh-user trial saw the standalone one first when the voyage
// was still open).
func TestOrdering_OpenVoyageBeatsAnOlderStandaloneMission(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create(engine.MissionSpec{Title: "older standalone", WriteArea: []string{"s/**"}})
	b.clock.Advance(time.Millisecond)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "a", Title: "voyage a", WriteArea: []string{"a/**"}},
	}}, "test")
	require.NoError(t, err)
	v, err := b.e.VoyageStatus(b.ctx, d.Voyage.ID)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageOpen, v.Voyage.State, "nothing of it started yet")
	m, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "x", Start: true})
	require.NoError(t, err)
	require.Equal(t, "voyage a", m.Title)
	v, err = b.e.VoyageStatus(b.ctx, d.Voyage.ID)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageActive, v.Voyage.State, "its first acquire activates it")
}

// Missions of an active voyage go before others of the same priority.
func TestOrdering_ActiveVoyageFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "a", Title: "voyage a", WriteArea: []string{"a/**"}},
		{Key: "b", Title: "voyage b", WriteArea: []string{"b/**"}},
	}}, "test")
	require.NoError(t, err)
	b.clock.Advance(time.Millisecond)
	b.create(engine.MissionSpec{Title: "older? no, newer loose", WriteArea: []string{"c/**"}})
	first := b.acquire(d.IDs["a"], true) // the voyage becomes active
	require.Equal(t, "voyage a", first.Title)
	m, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "x"})
	require.NoError(t, err)
	require.Equal(t, "voyage b", m.Title)
	v, err := b.e.VoyageStatus(b.ctx, d.Voyage.ID)
	require.NoError(t, err)
	require.Equal(t, domain.VoyageActive, v.Voyage.State)
}

// Runnable rules: hard dependencies must complete and land, serialization predecessors must
// be terminal, conflict partners must not run, missions without a write area run alone.
func TestRunnable_DependenciesConflictsExclusive(t *testing.T) {
	t.Parallel()
	b := setup(t)
	up := b.create(engine.MissionSpec{Title: "up", WriteArea: []string{"up/**"}})
	down := b.create(engine.MissionSpec{Title: "down", WriteArea: []string{"down/**"}, DependsOn: []string{up.ID}})
	try := func(id string) error {
		_, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "t", MissionID: id, Start: true})
		return err
	}
	require.ErrorIs(t, try(down.ID), domain.ErrNoWork)
	why, err := b.e.Explain(b.ctx, down.ID)
	require.NoError(t, err)
	require.Equal(t, engine.WhyHardDep, why[0].Code)

	m := b.acquire(up.ID, true)
	_, err = b.e.Complete(b.ctx, m.Fence(), domain.WorkerResult{Summary: "ok"})
	require.NoError(t, err)
	require.ErrorIs(t, try(down.ID), domain.ErrNoWork, "completed but not landed")
	_, err = b.e.RecordLanding(b.ctx, domain.Landing{MissionID: up.ID, Attempt: 1, Status: "landed"}, domain.LandingLanded)
	require.NoError(t, err)
	require.NoError(t, try(down.ID))

	// Write-area conflict: overlapping areas never run together.
	x := b.create(engine.MissionSpec{Title: "x", WriteArea: []string{"internal/auth/**"}})
	y := b.create(engine.MissionSpec{Title: "y", WriteArea: []string{"internal/auth/token.go"}})
	z := b.create(engine.MissionSpec{Title: "z", WriteArea: []string{"internal/db/**"}})
	require.NoError(t, try(x.ID))
	require.ErrorIs(t, try(y.ID), domain.ErrNoWork)
	why, err = b.e.Explain(b.ctx, y.ID)
	require.NoError(t, err)
	require.Equal(t, engine.WhyConflict, why[0].Code)
	require.NoError(t, try(z.ID), "disjoint write areas run together")

	// A mission without a write area is exclusive in its repository.
	excl := b.create(engine.MissionSpec{Title: "exclusive"})
	require.ErrorIs(t, try(excl.ID), domain.ErrNoWork)
	why, err = b.e.Explain(b.ctx, excl.ID)
	require.NoError(t, err)
	require.Equal(t, engine.WhyExclusive, why[0].Code)
	other := b.create(engine.MissionSpec{Title: "other repo", Repository: "/elsewhere"})
	require.NoError(t, try(other.ID), "exclusivity is per repository")
}

func TestRunnable_SerializationWaitsForTerminal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "first", Title: "first", WriteArea: []string{"a/**"}, RetryBudget: budget(0)},
		{Key: "then", Title: "then", WriteArea: []string{"b/**"}},
	}, Edges: []engine.EdgeSpec{{Mission: "then", DependsOn: "first", Type: domain.EdgeSerialization}}}, "t")
	require.NoError(t, err)
	_, err = b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "t", MissionID: d.IDs["then"]})
	require.ErrorIs(t, err, domain.ErrNoWork)
	m := b.acquire(d.IDs["first"], true)
	_, err = b.e.Fail(b.ctx, m.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: "test"}})
	require.NoError(t, err)
	// Failed is terminal: a serialization successor may run (unlike a hard dependent).
	b.acquire(d.IDs["then"], true)
}

func TestPause_StopsAcquiresOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	running := b.inState(domain.StateRunning)
	b.create(engine.MissionSpec{Title: "waits", WriteArea: []string{"w/**"}})
	require.NoError(t, b.e.SetPaused(b.ctx, true, "maintenance", "t"))
	_, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "t"})
	require.ErrorIs(t, err, domain.ErrPaused)
	_, err = b.e.Heartbeat(b.ctx, running.Fence())
	require.NoError(t, err, "running work goes on while paused")
	require.NoError(t, b.e.SetPaused(b.ctx, false, "", "t"))
	_, err = b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "t"})
	require.NoError(t, err)
}

func TestAcquire_FiltersCapabilitiesPersonasKinds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	goMission := b.create(engine.MissionSpec{Title: "go work", Capabilities: []string{"go"}, WriteArea: []string{"g/**"}})
	review := b.create(engine.MissionSpec{Title: "review", Persona: "reviewer", WriteArea: []string{"r/**"}})
	_, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "py", Capabilities: []string{"python"}, Personas: []string{"implementer"}})
	require.True(t, errors.Is(err, domain.ErrNoWork))
	m, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "rev", Personas: []string{"reviewer"}})
	require.NoError(t, err)
	require.Equal(t, review.ID, m.ID)
	m, err = b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "gopher", Capabilities: []string{"go", "sql"}})
	require.NoError(t, err)
	require.Equal(t, goMission.ID, m.ID)
}

// Issue 13 item 6: a voyage blocked before any of its missions started (no agent came within
// the grace period) and then reopened is active, so its missions win the tiebreak over a
// standalone mission of the same priority created earlier — whichever way it was reopened
// (the settle that sees progress, or the resolution of its report).
func TestOrdering_ReopenedVoyageFirst(t *testing.T) {
	t.Parallel()
	noAgent := func(m *domain.Mission) *engine.Reason {
		return &engine.Reason{Code: engine.WhyUnavailable, Message: "no agent took it"}
	}
	for _, how := range []string{"settle", "resolve"} {
		t.Run(how, func(t *testing.T) {
			b := setup(t)
			loose := b.create(engine.MissionSpec{Title: "standalone, older", WriteArea: []string{"s/**"}})
			b.clock.Advance(time.Millisecond)
			d, err := b.e.Dispatch(b.ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
				{Key: "a", Title: "voyage a", WriteArea: []string{"a/**"}}}}, "test")
			require.NoError(t, err)
			s, err := b.e.SettleVoyage(b.ctx, d.Voyage.ID, noAgent)
			require.NoError(t, err)
			require.Equal(t, domain.VoyageBlocked, s.Voyage.State)
			if how == "settle" {
				s, err = b.e.SettleVoyage(b.ctx, d.Voyage.ID, nil)
				require.NoError(t, err)
			} else {
				_, err = b.e.ResolveEscalation(b.ctx, s.Voyage.EscalationID, engine.ResolveAcknowledge, "an agent came", "test")
				require.NoError(t, err)
			}
			v, err := b.e.VoyageStatus(b.ctx, d.Voyage.ID)
			require.NoError(t, err)
			require.Equal(t, domain.VoyageActive, v.Voyage.State)
			m, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "x", Start: true})
			require.NoError(t, err)
			require.Equal(t, "voyage a", m.Title, "the active voyage's mission goes before %s", loose.ID)
			b.verifyReplay()
		})
	}
}
