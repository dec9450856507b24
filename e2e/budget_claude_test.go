package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// laterID is a mission id known only once the dispatch returned: a model request that comes
// first waits for it (on the model server's goroutine, which no test wait may fail). The
// test's end releases such a request with no id, should the test fail before setting it.
type laterID struct {
	once  sync.Once
	known chan struct{}
	id    string
}

func newLaterID(t *testing.T) *laterID {
	l := &laterID{known: make(chan struct{})}
	t.Cleanup(func() { l.set("") })
	return l
}

func (l *laterID) set(id string) { l.once.Do(func() { l.id = id; close(l.known) }) }

// get waits until the id is set and returns it.
func (l *laterID) get() string {
	<-l.known
	return l.id
}

// spendingScript answers the requests of the mission loopID names (its workspace path holds
// the id) with a Write call and 100,000 input tokens a turn, for ever while loop holds (a
// looping session), and with "done" after the tool result once it does not; every other
// mission's requests go to other.
func spendingScript(loopID *laterID, loop *atomic.Bool, other modelserver.Script) modelserver.Script {
	var turn atomic.Int64
	return func(r *modelserver.Request) modelserver.Turn {
		id := loopID.get()
		if id == "" || !strings.Contains(r.Workspace(), id) {
			return other(r)
		}
		if !loop.Load() && r.LastIsToolResult() {
			return modelserver.Text("done", modelserver.Usage{InputTokens: 10, OutputTokens: 1})
		}
		n := turn.Add(1)
		call := modelserver.Call{Name: "Write", Input: map[string]any{
			"file_path": filepath.Join(r.Workspace(), "a.txt"), "content": fmt.Sprintf("step %d\n", n)}}
		return modelserver.Turn{Text: fmt.Sprintf("Step %d.", n), Calls: []modelserver.Call{call},
			Usage: modelserver.Usage{InputTokens: 100_000, OutputTokens: 10}}
	}
}

// TestRealClaude_MissionBudgetStopsTheAgentMidRun: a real Claude Code session whose token
// counts cross its mission's cost limit mid-run (priced by the price table at $1 per million
// input tokens: $0.10 a turn against $0.25) is stopped by the scheduler before it ends: the
// attempt fails with kind budget, the mission blocks with an escalation showing the spend and
// the limit, no retry is spent, and the mission of the voyage that depends on it does not
// start. Raising the limit resumes it, and the voyage completes.
func TestRealClaude_MissionBudgetStopsTheAgentMidRun(t *testing.T) {
	srv := modelserver.Start(t)
	var loop atomic.Bool
	loopID := newLaterID(t)
	loop.Store(true)
	srv.Script(spendingScript(loopID, &loop, modelserver.WriteFile("b.txt", "b\n", perTurn)))
	prices := func(c *scheduler.Config) { c.Prices = engine.Prices{{Model: "*", Input: 1, Output: 1}} }
	h := newLoopHarnessWith(t, []agent.Profile{claudeProfile(t, srv)}, prices, "ANTHROPIC_API_KEY="+apiKey)
	d := h.dispatch(engine.VoyageSpec{Title: "spend", Missions: []engine.MissionSpec{
		{Key: "a", Title: "loops", Brief: "Write a.txt, step by step.", WriteArea: []string{"a.txt"}, CostLimitUSD: 0.25},
		{Key: "b", Title: "after", Brief: "Create b.txt at the top of the repository.", WriteArea: []string{"b.txt"}, DependsOn: []string{"a"}}}})
	a, b := d.IDs["a"], d.IDs["b"]
	loopID.set(a)

	h.until("the looping mission is blocked", func() bool { return h.mission(a).Mission.State == domain.StateBlocked })
	m := h.mission(a)
	require.Len(t, m.Attempts, 1, dumpMissions(h.ctx, h.eng))
	at := m.Attempts[0]
	require.Equal(t, domain.OutcomeFailed, at.Outcome)
	require.Equal(t, domain.FailureBudget, at.Failure.Kind)
	require.Contains(t, at.Failure.Summary, "mission "+a+"'s cost budget crossed: spent $0.3")
	require.Contains(t, at.Failure.Summary, "of $0.2500")
	require.Equal(t, 0, m.Mission.AttemptsUsed, "no retry spent")
	require.GreaterOrEqual(t, m.Mission.Usage.InputTokens, int64(300_000), "the running spend counts: Claude Code was stopped before its result")
	require.GreaterOrEqual(t, m.Mission.Usage.CostUSD, 0.25)
	require.NotNil(t, m.Escalation)
	require.Equal(t, "budget", m.Escalation.Kind)
	require.Contains(t, m.Escalation.Reason, "of $0.2500")
	require.Contains(t, m.Escalation.DecisionRequired, "update_mission")
	asked := len(srv.ModelRequests(modelserver.Anthropic))
	require.Less(t, asked, 15, "stopped soon after crossing, not by the hard timeout (the script loops for ever)")
	require.Equal(t, domain.StatePending, h.mission(b).Mission.State, "the rest of the voyage does not start")
	require.Empty(t, h.mission(b).Attempts)

	loop.Store(false)
	raised := 5.0
	_, err := h.eng.UpdateMission(h.ctx, a, engine.MissionPatch{CostLimitUSD: &raised}, "person")
	require.NoError(t, err)
	h.s.Wake()
	// The voyage was reported blocked while its missions could not go on; it reopens and
	// completes once they do.
	h.until("the voyage completes", func() bool {
		return h.voyage(d.Voyage.ID).Voyage.State == domain.VoyageCompleted
	})
	v := h.voyage(d.Voyage.ID)
	require.Equal(t, domain.VoyageCompleted, v.Voyage.State, dumpMissions(h.ctx, h.eng))
	require.Equal(t, domain.StateCompleted, h.mission(a).Mission.State)
	require.Equal(t, domain.StateCompleted, h.mission(b).Mission.State)
}
