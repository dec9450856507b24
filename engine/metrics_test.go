package engine_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// recorder is an engine.Observer that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	started []string
	ended   []domain.Attempt
}

func (r *recorder) AttemptStarted(p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, p)
}

func (r *recorder) AttemptEnded(a domain.Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, a)
}

// TestObserver_ToldOfCommittedAttempts: the Observer hears of each lease taken and each
// attempt record written, with the profile, outcome, failure and usage as stored, and of
// nothing a refused call did (a stale epoch, no work).
func TestObserver_ToldOfCommittedAttempts(t *testing.T) {
	rec := &recorder{}
	b := setup(t, func(o *engine.Options) { o.Observer = rec })
	m := b.create(engine.MissionSpec{Title: "observed", WriteArea: []string{"a/"}})
	got, err := b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "agent-1", Profile: "claude", MissionID: m.ID, Start: true})
	require.NoError(t, err)
	f := domain.Fence{MissionID: m.ID, Epoch: got.Lease.Epoch}
	_, err = b.e.Fail(b.ctx, f, engine.FailRequest{Failure: domain.Failure{Kind: "timeout", Summary: "slow"},
		Usage: &domain.Usage{InputTokens: 7, CostUSD: 0.5}})
	require.NoError(t, err)
	_, err = b.e.Complete(b.ctx, f, domain.WorkerResult{Status: "completed"})
	require.ErrorIs(t, err, domain.ErrLeaseLost, "the attempt already ended")
	_, err = b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "agent-1", Profile: "claude", Repository: "/nowhere"})
	require.ErrorIs(t, err, domain.ErrNoWork)

	b.clock.Advance(b.get(m.ID).NotBefore.Sub(b.clock.Now()) + 1) // past the retry backoff
	got, err = b.e.Acquire(b.ctx, engine.AcquireRequest{AgentID: "agent-2", MissionID: m.ID, Start: true})
	require.NoError(t, err)
	_, err = b.e.Complete(b.ctx, domain.Fence{MissionID: m.ID, Epoch: got.Lease.Epoch},
		domain.WorkerResult{Status: "completed", Usage: &domain.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: 1}})
	require.NoError(t, err)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Equal(t, []string{"claude", "agent-2"}, rec.started, "the profile, else the agent id")
	require.Len(t, rec.ended, 2)
	require.Equal(t, domain.OutcomeFailed, rec.ended[0].Outcome)
	require.Equal(t, "timeout", rec.ended[0].Failure.Kind)
	require.Equal(t, domain.Usage{InputTokens: 7, CostUSD: 0.5}, rec.ended[0].Usage)
	require.Equal(t, "claude", rec.ended[0].Profile)
	require.Equal(t, domain.OutcomeCompleted, rec.ended[1].Outcome)
	require.Equal(t, domain.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: 1}, rec.ended[1].Usage)
	as, err := b.e.GetMission(b.ctx, m.ID)
	require.NoError(t, err)
	require.Len(t, as.Attempts, len(rec.ended), "one call per stored attempt record")
}

// TestMetricCounts_Engine: the engine's read agrees with the mission counters.
func TestMetricCounts_Engine(t *testing.T) {
	b := setup(t)
	m := b.create(engine.MissionSpec{Title: "one", WriteArea: []string{"a/"}})
	b.create(engine.MissionSpec{Title: "two", WriteArea: []string{"b/"}})
	b.acquire(m.ID, true)
	c, err := b.e.MetricCounts(b.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, c.Missions[domain.StatePending])
	require.Equal(t, 1, c.Missions[domain.StateRunning])
	require.Equal(t, map[string]int{"agent": 1}, c.Live)
}
