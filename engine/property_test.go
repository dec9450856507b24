package engine_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// TestProperty_EngineMatchesModel drives the engine with random sequences of create,
// dispatch (with hard, soft, serialization and conflict edges), acquire (next and targeted),
// start, heartbeat, yield, complete, fail, release, expire (the fake clock past the lease TTL,
// then ReapExpired), cancel, retry, land and pause, by several agents over several missions
// and repositories with random write areas, and compares it after every step with a small
// in-memory model of design brief §2–§4. Invariants checked after every step:
//
//   - every mission's state, epoch, attempt, weighted attempts, landing and lease expiry are
//     the model's; the per-state counters agree;
//   - an operation presented with a stale epoch fails with ErrLeaseLost and changes nothing
//     (row and event log), so there is never more than one live lease per mission;
//   - weighted attempts never exceed the retry budget while a mission can still run;
//   - a lease that expires before any heartbeat is abandoned, not crashed: it costs no
//     budget, counts in the mission's abandons (reset by any other end of an attempt and by
//     a retry), and the engine.DefaultAbandonLimit-th in a row blocks the mission;
//   - nothing is acquired while a hard dependency is not completed and landed, a serialization
//     predecessor is not terminal, a conflict partner (edge, overlapping write area or an
//     exclusive mission in the repository) is leased or running, the backoff has not passed or
//     the scheduler is paused; acquire-next takes the first runnable mission in pick order;
//   - Explain says runnable exactly when a targeted acquire succeeds;
//   - no pending mission waits on a failed or cancelled hard dependency (shared/cases B14);
//   - replaying the event log gives the tables (VerifyReplay).
//
// The default run is 50 random sequences of about 30 steps (a few seconds; 8 under -race);
// -rapid.checks (or RAPID_CHECKS) overrides it, and the heavy suite runs 1000:
// go test -run TestProperty_EngineMatchesModel ./engine/ -rapid.checks=2000 -rapid.steps=100
func TestProperty_EngineMatchesModel(t *testing.T) {
	defaultRapidChecks(50, 8)
	t.Parallel()
	dir := t.TempDir()
	var n atomic.Int64
	rapid.Check(t, func(rt *rapid.T) {
		sub := filepath.Join(dir, fmt.Sprintf("p%d", n.Add(1)))
		require.NoError(rt, os.MkdirAll(sub, 0o700))
		st, err := teststore.Open(context.Background(), teststore.LocationIn(sub))
		require.NoError(rt, err)
		defer func() {
			require.NoError(rt, st.Close())
			require.NoError(rt, teststore.Remove(sub))
		}()
		clock := engine.NewFakeClock(t0)
		pm := &propMachine{
			ctx: context.Background(), st: st, clock: clock,
			e: engine.New(st, engine.Options{Clock: clock, LeaseTTL: propTTL, DefaultRepository: "/repo",
				Backoff: engine.Backoff{Initial: time.Second, Max: 8 * time.Second, Jitter: 0.1}}),
			missions: map[string]*modelMission{}, voyages: map[string]bool{},
			fences: map[string][]domain.Fence{}, renewed: map[domain.Fence]time.Time{},
		}
		rt.Repeat(rapid.StateMachineActions(pm))
	})
}

// defaultRapidChecks sets rapid's number of checks unless the command line or RAPID_CHECKS
// chose one (rapid's own default, 100, is too slow for a per-commit run on 2 cores).
func defaultRapidChecks(normal, underRace int) {
	if _, ok := os.LookupEnv("RAPID_CHECKS"); ok {
		return
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if set {
		return
	}
	n := normal
	if raceEnabled {
		n = underRace
	}
	_ = flag.Set("rapid.checks", strconv.Itoa(n))
}

const (
	propTTL         = 10 * time.Second
	propRenew       = time.Second // engine default RenewInterval
	propMaxMissions = 14
)

var (
	propAgents = []string{"agent-1", "agent-2", "agent-3"}
	propRepos  = []string{"/repo", "/repo2"}
	propAreas  = [][]string{nil, {"a/**"}, {"a/x/**"}, {"b/**"}, {"b/y.go"}, {"c/**"}, {"c/z/**", "d/**"}}
	propEdges  = []domain.EdgeType{domain.EdgeHard, domain.EdgeSoft, domain.EdgeSerialization, domain.EdgeConflict}
	// Two ordinary failures (same kind, different summaries) and an environment failure.
	propFailures = []domain.Failure{
		{Kind: domain.FailureError, Tool: "go test", Summary: "TestA fails"},
		{Kind: domain.FailureError, Tool: "go build", Summary: "does not compile"},
		{Kind: domain.FailureAuth, Summary: "credentials rejected"},
	}
)

// modelMission is the model's view of one mission.
type modelMission struct {
	id         string
	created    time.Time
	state      domain.MissionState
	epoch      int64
	attempt    int
	used       int // weighted attempts
	budget     int
	priority   int
	repo       string
	area       []string
	voyage     string
	hard       []string // hard dependencies
	serial     []string // serialization predecessors
	conflicts  []string // explicit conflict edges, either direction
	landing    domain.LandingState
	expires    time.Time
	notBefore  time.Time // copied from the engine after a failure (the backoff has jitter)
	checkpoint bool
	lastSig    string // the model's token for the last failure signature
	cause      string // blocked because this upstream failed or was cancelled
	contacted  bool   // the current attempt's agent heartbeated
	abandons   int    // attempts in a row whose lease expired before any heartbeat
}

// endAttempt is the model of an attempt ending any way but abandoned: the row of abandons
// is broken.
func (m *modelMission) endAttempt() { m.abandons, m.contacted = 0, false }

func (m *modelMission) exclusive() bool { return len(m.area) == 0 }

type propMachine struct {
	ctx      context.Context
	st       engine.Store
	e        *engine.Engine
	clock    *engine.FakeClock
	missions map[string]*modelMission
	order    []string                   // ids in creation order
	voyages  map[string]bool            // voyage id → live (open, active or blocked: the pick tiebreak)
	fences   map[string][]domain.Fence  // every fence each agent was given
	renewed  map[domain.Fence]time.Time // the engine's last lease write per fence (RenewInterval)
	paused   bool
	seq      int64 // the last event sequence number seen
}

func (pm *propMachine) now() time.Time { return pm.clock.Now() }

func (pm *propMachine) ids() []string { return slices.Clone(pm.order) }

// ---- the model's rules ----------------------------------------------------------------

// whyNot returns why the model thinks m cannot be acquired now ("" = it can).
func (pm *propMachine) whyNot(m *modelMission) string {
	switch {
	case !m.state.Runnable():
		return "state " + string(m.state)
	case pm.paused:
		return "paused"
	case m.notBefore.After(pm.now()):
		return "backoff"
	}
	for _, d := range m.hard {
		u := pm.missions[d]
		if u.state != domain.StateCompleted || !u.landing.Satisfies() {
			return "hard dependency " + d
		}
	}
	for _, d := range m.serial {
		if !pm.missions[d].state.Terminal() {
			return "serialization " + d
		}
	}
	for _, o := range pm.missions {
		if o.id == m.id || !o.state.Leased() {
			continue
		}
		if slices.Contains(m.conflicts, o.id) {
			return "conflict edge with " + o.id
		}
		if o.repo != m.repo {
			continue
		}
		if m.exclusive() || o.exclusive() {
			return "exclusive with " + o.id
		}
		if ok, _ := engine.AreasOverlap(m.area, o.area); ok {
			return "write area overlaps " + o.id
		}
	}
	return ""
}

// pickOrder sorts ids by design brief §3's order.
func (pm *propMachine) pickOrder(ids []string) {
	key := func(id string) (int, int, int) {
		m := pm.missions[id]
		active, resumed := 1, 1
		if m.voyage != "" && pm.voyages[m.voyage] {
			active = 0
		}
		if m.state == domain.StateInterrupted {
			resumed = 0
		}
		return m.priority, active, resumed
	}
	sort.SliceStable(ids, func(i, j int) bool {
		a1, a2, a3 := key(ids[i])
		b1, b2, b3 := key(ids[j])
		if a1 != b1 {
			return a1 < b1
		}
		if a2 != b2 {
			return a2 < b2
		}
		if a3 != b3 {
			return a3 < b3
		}
		ci, cj := pm.missions[ids[i]].created, pm.missions[ids[j]].created
		if !ci.Equal(cj) {
			return ci.Before(cj)
		}
		return ids[i] < ids[j]
	})
}

// failedUpstream returns m's first hard dependency (by id) that failed or was cancelled.
func (pm *propMachine) failedUpstream(m *modelMission) string {
	deps := slices.Sorted(slices.Values(m.hard))
	for _, d := range deps {
		if s := pm.missions[d].state; s == domain.StateFailed || s == domain.StateCancelled {
			return d
		}
	}
	return ""
}

// propagate blocks every pending or interrupted mission that transitively hard-depends on
// up, which just failed or was cancelled.
func (pm *propMachine) propagate(up string) {
	seen := map[string]bool{up: true}
	queue := []string{up}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, x := range pm.order {
			m := pm.missions[x]
			if seen[x] || !slices.Contains(m.hard, id) {
				continue
			}
			seen[x] = true
			queue = append(queue, x)
			if m.state.Runnable() {
				m.state, m.cause = domain.StateBlocked, up
			}
		}
	}
}

// reopen moves m back to pending (retry, resolution); a mission whose hard dependency failed
// or was cancelled is blocked again at once, naming it.
func (pm *propMachine) reopen(m *modelMission) {
	m.state, m.cause, m.notBefore, m.abandons = domain.StatePending, "", time.Time{}, 0
	if up := pm.failedUpstream(m); up != "" {
		m.state, m.cause = domain.StateBlocked, up
	}
}

// failure applies the retry policy to m's current attempt; sig is the model's signature
// token. It returns whether the engine set a backoff.
func (pm *propMachine) failure(m *modelMission, sig string, env, expire bool) bool {
	prev := m.lastSig
	m.lastSig, m.expires = sig, time.Time{}
	if env {
		m.state, m.cause = domain.StateBlocked, ""
		return false
	}
	w := 1
	if prev != "" && prev == sig {
		w = 2
	}
	m.used += w
	if m.used > m.budget {
		m.state = domain.StateFailed
		pm.propagate(m.id)
		return false
	}
	m.state = domain.StatePending
	if expire && m.checkpoint {
		m.state = domain.StateInterrupted
	}
	return true
}

// ---- helpers that talk to the engine ---------------------------------------------------

func (pm *propMachine) get(t *rapid.T, id string) domain.Mission {
	d, err := pm.e.GetMission(pm.ctx, id)
	require.NoError(t, err)
	return d.Mission
}

// lastSeq returns the sequence number of the last event (reading on from the last one seen).
func (pm *propMachine) lastSeq(t *rapid.T) int64 {
	for {
		evs, err := pm.e.Events(pm.ctx, engine.EventFilter{AfterSeq: pm.seq, Limit: 10000})
		require.NoError(t, err)
		if len(evs) == 0 {
			return pm.seq
		}
		pm.seq = evs[len(evs)-1].Seq
	}
}

// refused checks that err wraps want and that mission id and the event log did not change.
func (pm *propMachine) refused(t *rapid.T, err, want error, id string, before domain.Mission, seq int64, what string) {
	require.Error(t, err, what)
	require.True(t, errors.Is(err, want), "%s: want %v, got %v", what, want, err)
	require.Equal(t, before, pm.get(t, id), "%s: a refused operation changed the mission", what)
	require.Equal(t, seq, pm.lastSeq(t), "%s: a refused operation wrote an event", what)
}

func (pm *propMachine) copyBackoff(t *rapid.T, m *modelMission) {
	nb := pm.get(t, m.id).NotBefore
	require.True(t, nb.After(pm.now()), "%s: a retry after failure has a backoff", m.id)
	m.notBefore = nb
}

// pickFence draws an agent and one of the fences it was given, preferring live ones.
func (pm *propMachine) pickFence(t *rapid.T) (string, domain.Fence) {
	type held struct {
		agent string
		f     domain.Fence
	}
	var all, live []held
	for _, a := range propAgents {
		for _, f := range pm.fences[a] {
			h := held{a, f}
			all = append(all, h)
			if m := pm.missions[f.MissionID]; m.epoch == f.Epoch && m.state.Leased() {
				live = append(live, h)
			}
		}
	}
	if len(all) == 0 {
		t.Skip("no agent holds a lease")
	}
	pool := all
	if len(live) > 0 && rapid.Bool().Draw(t, "live") {
		pool = live
	}
	h := rapid.SampledFrom(pool).Draw(t, "fence")
	return h.agent, h.f
}

func (pm *propMachine) live(f domain.Fence) (*modelMission, bool) {
	m := pm.missions[f.MissionID]
	return m, m.epoch == f.Epoch && m.state.Leased()
}

// ---- actions ---------------------------------------------------------------------------

func (pm *propMachine) Create(t *rapid.T) {
	if len(pm.order) >= propMaxMissions {
		t.Skip("enough missions")
	}
	repo := rapid.SampledFrom(propRepos).Draw(t, "repo")
	area := rapid.SampledFrom(propAreas).Draw(t, "area")
	var deps []string
	if len(pm.order) > 0 {
		deps = rapid.SliceOfNDistinct(rapid.SampledFrom(pm.ids()), 0, 2, rapid.ID[string]).Draw(t, "deps")
	}
	spec := engine.MissionSpec{Title: "m", Repository: repo, WriteArea: area,
		Priority:    rapid.SampledFrom([]int{1, 50, 100}).Draw(t, "priority"),
		RetryBudget: budget(rapid.IntRange(0, 3).Draw(t, "budget")), DependsOn: deps}
	c, err := pm.e.CreateMission(pm.ctx, spec, "test")
	require.NoError(t, err)
	m := &modelMission{id: c.Mission.ID, created: pm.now(), state: domain.StatePending, budget: *spec.RetryBudget,
		priority: spec.Priority, repo: repo, area: area, hard: deps, landing: domain.LandingNone}
	pm.add(m)
	if up := pm.failedUpstream(m); up != "" {
		m.state, m.cause = domain.StateBlocked, up
	}
}

func (pm *propMachine) add(m *modelMission) {
	pm.missions[m.id] = m
	pm.order = append(pm.order, m.id)
}

func (pm *propMachine) Dispatch(t *rapid.T) {
	if len(pm.order) >= propMaxMissions {
		t.Skip("enough missions")
	}
	n := rapid.IntRange(1, 3).Draw(t, "missions")
	spec := engine.VoyageSpec{Title: "v", Repository: rapid.SampledFrom(propRepos).Draw(t, "repo")}
	type edge struct {
		from, to int // index into new missions; to < 0: existing mission -to-1
		typ      domain.EdgeType
	}
	seen := map[edge]bool{}
	var edges []edge
	for i := 0; i < n; i++ {
		spec.Missions = append(spec.Missions, engine.MissionSpec{Key: fmt.Sprintf("k%d", i), Title: "m",
			WriteArea:   rapid.SampledFrom(propAreas).Draw(t, "area"),
			Priority:    rapid.SampledFrom([]int{1, 50, 100}).Draw(t, "priority"),
			RetryBudget: budget(rapid.IntRange(0, 3).Draw(t, "budget"))})
		targets := i + len(pm.order)
		if targets == 0 {
			continue
		}
		for j, k := 0, rapid.IntRange(0, 2).Draw(t, "edges"); j < k; j++ {
			to := rapid.IntRange(0, targets-1).Draw(t, "to")
			if to >= i {
				to = -(to - i) - 1
			}
			e := edge{from: i, to: to, typ: rapid.SampledFrom(propEdges).Draw(t, "type")}
			if !seen[e] {
				seen[e] = true
				edges = append(edges, e)
			}
		}
	}
	for _, e := range edges {
		to := fmt.Sprintf("k%d", e.to)
		if e.to < 0 {
			to = pm.order[-e.to-1]
		}
		spec.Edges = append(spec.Edges, engine.EdgeSpec{Mission: fmt.Sprintf("k%d", e.from), DependsOn: to, Type: e.typ})
	}
	d, err := pm.e.Dispatch(pm.ctx, spec, "test")
	require.NoError(t, err, "dispatch %+v", spec.Edges)
	pm.voyages[d.Voyage.ID] = true // a dispatched voyage is live at once (Armada: schema 11)
	news := make([]*modelMission, n)
	for i, ms := range spec.Missions {
		m := &modelMission{id: d.IDs[ms.Key], created: pm.now(), state: domain.StatePending, budget: *ms.RetryBudget,
			priority: ms.Priority, repo: spec.Repository, area: ms.WriteArea, voyage: d.Voyage.ID, landing: domain.LandingNone}
		news[i] = m
		pm.add(m)
	}
	for _, e := range edges {
		from := news[e.from]
		to := ""
		if e.to >= 0 {
			to = news[e.to].id
		} else {
			to = pm.order[-e.to-1]
		}
		switch e.typ {
		case domain.EdgeHard:
			from.hard = append(from.hard, to)
		case domain.EdgeSerialization:
			from.serial = append(from.serial, to)
		case domain.EdgeConflict:
			from.conflicts = append(from.conflicts, to)
			pm.missions[to].conflicts = append(pm.missions[to].conflicts, from.id)
		}
	}
	for _, m := range news {
		if up := pm.failedUpstream(m); up != "" {
			m.state, m.cause = domain.StateBlocked, up
		}
	}
}

// AcquireNext asks for the next runnable mission: the model's first in pick order.
func (pm *propMachine) AcquireNext(t *rapid.T) {
	agentID := rapid.SampledFrom(propAgents).Draw(t, "agent")
	start := rapid.Bool().Draw(t, "start")
	var want []string
	for _, id := range pm.order {
		if pm.whyNot(pm.missions[id]) == "" {
			want = append(want, id)
		}
	}
	pm.pickOrder(want)
	first := pm.plannerFirst(t)
	got, err := pm.e.Acquire(pm.ctx, engine.AcquireRequest{AgentID: agentID, Start: start})
	require.Equal(t, first, got.ID, "the planner's first runnable is %q, acquire-next took %q (%v)", first, got.ID, err)
	if len(want) == 0 {
		want := domain.ErrNoWork
		if pm.paused {
			want = domain.ErrPaused
		}
		require.ErrorIs(t, err, want)
		return
	}
	require.NoError(t, err)
	require.Equal(t, want[0], got.ID, "acquire-next took %s; the model's order is %v", got.ID, want)
	pm.acquired(t, agentID, got, start)
}

// AcquireTargeted asks Explain about one mission, then acquires exactly that one: Explain
// says runnable exactly when the acquire succeeds, and both agree with the model.
func (pm *propMachine) AcquireTargeted(t *rapid.T) {
	if len(pm.order) == 0 {
		t.Skip("no missions")
	}
	id := rapid.SampledFrom(pm.order).Draw(t, "mission")
	agentID := rapid.SampledFrom(propAgents).Draw(t, "agent")
	start := rapid.Bool().Draw(t, "start")
	why := pm.whyNot(pm.missions[id])
	reasons, err := pm.e.Explain(pm.ctx, id)
	require.NoError(t, err)
	require.Equal(t, reasons, pm.plannerBlockers(t, id), "Explain and the planner's rule differ")
	got, err := pm.e.Acquire(pm.ctx, engine.AcquireRequest{AgentID: agentID, MissionID: id, Start: start})
	require.Equal(t, len(reasons) == 0, err == nil, "Explain said %v, acquire said %v", reasons, err)
	if why != "" {
		require.NotEmpty(t, reasons, "model: not runnable (%s)", why)
		want := domain.ErrNoWork
		if pm.paused {
			want = domain.ErrPaused
		}
		require.ErrorIs(t, err, want, "model: not runnable (%s)", why)
		return
	}
	require.NoError(t, err, "model: runnable; Explain: %v", reasons)
	pm.acquired(t, agentID, got, start)
}

func (pm *propMachine) acquired(t *rapid.T, agentID string, got domain.Mission, start bool) {
	m := pm.missions[got.ID]
	require.Empty(t, pm.whyNot(m), "acquired a mission the model holds back")
	want := domain.StateLeased
	if start {
		want = domain.StateRunning
	}
	require.Equal(t, want, got.State)
	require.Equal(t, m.epoch+1, got.Lease.Epoch, "every acquire takes the next epoch")
	require.Equal(t, agentID, got.Lease.Owner)
	m.state, m.epoch, m.attempt, m.expires = want, m.epoch+1, m.attempt+1, pm.now().Add(propTTL)
	m.contacted = false
	if m.voyage != "" {
		pm.voyages[m.voyage] = true
	}
	fs := append(pm.fences[agentID], got.Fence())
	if len(fs) > 6 {
		fs = fs[len(fs)-6:]
	}
	pm.fences[agentID] = fs
}

func (pm *propMachine) Start(t *rapid.T) {
	_, f := pm.pickFence(t)
	m, live := pm.live(f)
	before, seq := pm.get(t, f.MissionID), pm.lastSeq(t)
	_, err := pm.e.Start(pm.ctx, f)
	switch {
	case !live:
		pm.refused(t, err, domain.ErrLeaseLost, m.id, before, seq, "start with a stale epoch")
	case m.state != domain.StateLeased:
		pm.refused(t, err, domain.ErrIllegalTransition, m.id, before, seq, "start while "+string(m.state))
	default:
		require.NoError(t, err)
		m.state, m.expires = domain.StateRunning, pm.now().Add(propTTL)
	}
}

func (pm *propMachine) Heartbeat(t *rapid.T) {
	_, f := pm.pickFence(t)
	m, live := pm.live(f)
	before, seq := pm.get(t, f.MissionID), pm.lastSeq(t)
	ans, err := pm.e.Heartbeat(pm.ctx, f)
	last, ok := pm.renewed[f]
	write := !ok || pm.now().Sub(last) >= propRenew
	if !live {
		pm.refused(t, err, domain.ErrLeaseLost, m.id, before, seq, "heartbeat with a stale epoch")
		if write {
			delete(pm.renewed, f)
		}
		return
	}
	require.NoError(t, err)
	m.contacted = true // a read-only answer follows a write that recorded contact
	require.Equal(t, write, ans.Written, "heartbeats write at most once per RenewInterval")
	require.Equal(t, seq, pm.lastSeq(t), "a heartbeat writes no event")
	if write {
		m.expires, pm.renewed[f] = pm.now().Add(propTTL), pm.now()
	}
}

func (pm *propMachine) Yield(t *rapid.T) {
	_, f := pm.pickFence(t)
	m, live := pm.live(f)
	before, seq := pm.get(t, f.MissionID), pm.lastSeq(t)
	var cp []byte
	if rapid.Bool().Draw(t, "checkpoint") {
		cp = []byte(`{"step":1}`)
	}
	err := pm.e.Yield(pm.ctx, f, cp, "test", "")
	delete(pm.renewed, f)
	switch {
	case !live:
		pm.refused(t, err, domain.ErrLeaseLost, m.id, before, seq, "yield with a stale epoch")
	case m.state != domain.StateRunning:
		pm.refused(t, err, domain.ErrIllegalTransition, m.id, before, seq, "yield while "+string(m.state))
	default:
		require.NoError(t, err)
		m.endAttempt()
		m.state, m.expires, m.checkpoint = domain.StateInterrupted, time.Time{}, m.checkpoint || cp != nil
	}
}

func (pm *propMachine) Release(t *rapid.T) {
	_, f := pm.pickFence(t)
	m, live := pm.live(f)
	before, seq := pm.get(t, f.MissionID), pm.lastSeq(t)
	err := pm.e.Release(pm.ctx, f, "test")
	delete(pm.renewed, f)
	if !live {
		pm.refused(t, err, domain.ErrLeaseLost, m.id, before, seq, "release with a stale epoch")
		return
	}
	require.NoError(t, err)
	m.endAttempt()
	m.state, m.expires = domain.StatePending, time.Time{}
	if m.checkpoint {
		m.state = domain.StateInterrupted
	}
}

func (pm *propMachine) Complete(t *rapid.T) {
	_, f := pm.pickFence(t)
	m, live := pm.live(f)
	before, seq := pm.get(t, f.MissionID), pm.lastSeq(t)
	_, err := pm.e.Complete(pm.ctx, f, domain.WorkerResult{Summary: "done"})
	delete(pm.renewed, f)
	switch {
	case !live:
		pm.refused(t, err, domain.ErrLeaseLost, m.id, before, seq, "complete with a stale epoch")
	case m.state != domain.StateRunning:
		pm.refused(t, err, domain.ErrIllegalTransition, m.id, before, seq, "complete while "+string(m.state))
	default:
		require.NoError(t, err)
		m.endAttempt()
		m.state, m.expires, m.landing = domain.StateCompleted, time.Time{}, domain.LandingPending
	}
}

func (pm *propMachine) Fail(t *rapid.T) {
	_, f := pm.pickFence(t)
	m, live := pm.live(f)
	before, seq := pm.get(t, f.MissionID), pm.lastSeq(t)
	i := rapid.IntRange(0, len(propFailures)-1).Draw(t, "failure")
	// Lost: the agent vanished (like an expired lease); Final: retrying cannot help.
	kind := rapid.SampledFrom([]string{"plain", "plain", "lost", "final"}).Draw(t, "kind")
	got, err := pm.e.Fail(pm.ctx, f, engine.FailRequest{Failure: propFailures[i], Summary: "failed",
		Lost: kind == "lost", Final: kind == "final"})
	delete(pm.renewed, f)
	if !live {
		pm.refused(t, err, domain.ErrLeaseLost, m.id, before, seq, "fail with a stale epoch")
		return
	}
	require.NoError(t, err)
	m.endAttempt()
	env := domain.EnvironmentFailure(propFailures[i].Kind)
	if kind == "final" && !env {
		m.budget = -1 // the model's way to say: whatever the weight, the budget is spent
		pm.failure(m, fmt.Sprintf("fail%d", i), false, false)
		m.budget = got.RetryBudget
	} else if pm.failure(m, fmt.Sprintf("fail%d", i), env, kind == "lost") {
		pm.copyBackoff(t, m)
	}
	require.Equal(t, m.state, got.State)
}

// Advance moves the fake clock (backoffs pass, leases near expiry).
func (pm *propMachine) Advance(t *rapid.T) {
	pm.clock.Advance(rapid.SampledFrom([]time.Duration{300 * time.Millisecond, time.Second, 3 * time.Second, 7 * time.Second}).Draw(t, "by"))
}

// Reap requeues whatever lease expired by now.
func (pm *propMachine) Reap(t *rapid.T) { pm.reap(t) }

// Expire moves the clock past the lease TTL, then reaps: every live lease is lost.
func (pm *propMachine) Expire(t *rapid.T) {
	pm.clock.Advance(propTTL + time.Second)
	pm.reap(t)
}

func (pm *propMachine) reap(t *rapid.T) {
	var want []string
	for _, id := range pm.order {
		if m := pm.missions[id]; m.state.Leased() && m.expires.Before(pm.now()) {
			want = append(want, id)
		}
	}
	got, err := pm.e.ReapExpired(pm.ctx, nil)
	require.NoError(t, err)
	require.ElementsMatch(t, want, got, "reaped")
	for _, id := range want {
		m := pm.missions[id]
		delete(pm.renewed, domain.Fence{MissionID: id, Epoch: m.epoch})
		if !m.contacted {
			pm.abandoned(m)
			continue
		}
		m.endAttempt()
		if pm.failure(m, "expire", false, true) {
			pm.copyBackoff(t, m)
		}
	}
}

// abandoned is the model of an expiry with no heartbeat ever: no budget, no backoff, no
// signature; the engine.DefaultAbandonLimit-th in a row blocks the mission.
func (pm *propMachine) abandoned(m *modelMission) {
	m.abandons++
	m.contacted, m.expires = false, time.Time{}
	switch {
	case m.abandons >= engine.DefaultAbandonLimit:
		m.state, m.cause = domain.StateBlocked, ""
	case m.checkpoint:
		m.state = domain.StateInterrupted
	default:
		m.state = domain.StatePending
	}
}

func (pm *propMachine) Cancel(t *rapid.T) {
	if len(pm.order) == 0 {
		t.Skip("no missions")
	}
	m := pm.missions[rapid.SampledFrom(pm.order).Draw(t, "mission")]
	before, seq := pm.get(t, m.id), pm.lastSeq(t)
	_, err := pm.e.Cancel(pm.ctx, m.id, "test", rapid.Bool().Draw(t, "skip"), "test")
	if m.state.Terminal() {
		pm.refused(t, err, domain.ErrIllegalTransition, m.id, before, seq, "cancel while "+string(m.state))
		return
	}
	require.NoError(t, err)
	if m.state.Leased() {
		m.endAttempt()
	}
	m.state, m.expires, m.cause = domain.StateCancelled, time.Time{}, ""
	pm.propagate(m.id)
}

func (pm *propMachine) Retry(t *rapid.T) {
	if len(pm.order) == 0 {
		t.Skip("no missions")
	}
	m := pm.missions[rapid.SampledFrom(pm.order).Draw(t, "mission")]
	before, seq := pm.get(t, m.id), pm.lastSeq(t)
	_, err := pm.e.Retry(pm.ctx, m.id, "test")
	switch m.state {
	case domain.StateFailed, domain.StateBlocked, domain.StateCancelled:
	default:
		pm.refused(t, err, domain.ErrIllegalTransition, m.id, before, seq, "retry while "+string(m.state))
		return
	}
	require.NoError(t, err)
	m.used, m.lastSig = 0, ""
	pm.reopen(m)
	for _, id := range pm.order {
		if x := pm.missions[id]; x.state == domain.StateBlocked && x.cause == m.id {
			pm.reopen(x)
		}
	}
}

// Land records a landing of a completed mission: landed (or not required), which satisfies
// its dependents. The landing table refuses it unless the mission is completed with a
// landing still pending; the same outcome again changes nothing.
func (pm *propMachine) Land(t *rapid.T) {
	if len(pm.order) == 0 {
		t.Skip("no missions")
	}
	m := pm.missions[rapid.SampledFrom(pm.order).Draw(t, "mission")]
	to := rapid.SampledFrom([]domain.LandingState{domain.LandingLanded, domain.LandingNotRequired}).Draw(t, "landing")
	before, seq := pm.get(t, m.id), pm.lastSeq(t)
	_, err := pm.e.RecordLanding(pm.ctx, domain.Landing{MissionID: m.id, Attempt: before.Attempt, Status: "landed"}, to)
	switch {
	case m.state != domain.StateCompleted:
		pm.refused(t, err, domain.ErrIllegalTransition, m.id, before, seq, "land while "+string(m.state))
		return
	case m.landing == to:
		require.NoError(t, err)
		require.Equal(t, seq, pm.lastSeq(t), "a repeated landing outcome writes no event")
		return
	case !domain.CanLand(m.landing, to, domain.LandOpLand):
		pm.refused(t, err, domain.ErrIllegalTransition, m.id, before, seq, "land "+string(to)+" while landing "+string(m.landing))
		return
	}
	require.NoError(t, err)
	m.landing = to
}

func (pm *propMachine) Pause(t *rapid.T) {
	require.NoError(t, pm.e.SetPaused(pm.ctx, !pm.paused, "test", "test"))
	pm.paused = !pm.paused
}

// ---- invariants ------------------------------------------------------------------------

func (pm *propMachine) Check(t *rapid.T) {
	ms, err := pm.e.ListMissions(pm.ctx, engine.MissionFilter{Limit: 1000})
	require.NoError(t, err)
	require.Len(t, ms, len(pm.order))
	counts := map[domain.MissionState]int{}
	for _, got := range ms {
		m := pm.missions[got.ID]
		require.NotNil(t, m, "unknown mission %s", got.ID)
		counts[m.state]++
		require.Equal(t, m.state, got.State, "%s state", m.id)
		require.Equal(t, m.epoch, got.Lease.Epoch, "%s epoch", m.id)
		require.Equal(t, m.attempt, got.Attempt, "%s attempt", m.id)
		require.Equal(t, m.used, got.AttemptsUsed, "%s weighted attempts", m.id)
		require.Equal(t, m.landing, got.Landing, "%s landing", m.id)
		require.Equal(t, m.checkpoint, got.Checkpoint != nil, "%s checkpoint", m.id)
		require.Equal(t, m.abandons, got.Abandons, "%s abandons in a row", m.id)
		if m.state.Leased() {
			require.Equal(t, m.contacted, got.Contacted, "%s agent heard from", m.id)
		}
		if m.state == domain.StateBlocked {
			require.NotEmpty(t, got.EscalationID, "%s is blocked without an escalation", m.id)
		}
		if m.state.Leased() {
			require.True(t, m.expires.Equal(got.Lease.ExpiresAt), "%s lease expiry: model %v, engine %v", m.id, m.expires, got.Lease.ExpiresAt)
		}
		if m.state != domain.StateFailed {
			require.LessOrEqual(t, got.AttemptsUsed, got.RetryBudget, "%s spent more than its budget and may still run", m.id)
		}
		if m.state.Runnable() {
			require.Empty(t, pm.failedUpstream(m), "%s is %s but a hard dependency failed or was cancelled (B14)", m.id, m.state)
		}
	}
	pm.checkLive(t)
	st, err := pm.e.Status(pm.ctx)
	require.NoError(t, err)
	for _, s := range domain.AllStates() {
		require.Equal(t, counts[s], st.Counts[s], "counter of %s", s)
	}
	diffs, err := pm.e.VerifyReplay(pm.ctx)
	require.NoError(t, err)
	require.Empty(t, diffs)
}

// checkLive: missions that run together never conflict, and each ran with its hard
// dependencies completed and landed.
func (pm *propMachine) checkLive(t *rapid.T) {
	var live []*modelMission
	for _, id := range pm.order {
		if m := pm.missions[id]; m.state.Leased() {
			live = append(live, m)
			for _, d := range m.hard {
				u := pm.missions[d]
				require.True(t, u.state == domain.StateCompleted && u.landing.Satisfies(), "%s runs before its hard dependency %s", m.id, d)
			}
		}
	}
	for i, a := range live {
		for _, b := range live[i+1:] {
			require.False(t, slices.Contains(a.conflicts, b.id), "conflict partners %s and %s run together", a.id, b.id)
			if a.repo != b.repo {
				continue
			}
			require.False(t, a.exclusive() || b.exclusive(), "%s and %s run together beside an exclusive mission", a.id, b.id)
			ok, why := engine.AreasOverlap(a.area, b.area)
			require.False(t, ok, "%s and %s run together: %s", a.id, b.id, why)
		}
	}
}
