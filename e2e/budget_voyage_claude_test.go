package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// voyageTurn is the usage of each model turn of the voyage-budget test: 4,000 input tokens a
// turn. Claude Code prices them itself in its result (about $0.03 a mission of two turns at
// its own price for the model), and the running spend in between is priced by the test's
// table ($1 per million), so the $0.05 budget is crossed by the second mission.
var voyageTurn = modelserver.Usage{InputTokens: 4_000, OutputTokens: 10}

// filesByMission answers each request with WriteFile of the file of the mission whose
// worktree (…/<mission id>/a<N>) the request names; 500 for an unknown one.
type filesByMission struct {
	mu    sync.Mutex
	files map[string]string
}

func (f *filesByMission) script(r *modelserver.Request) modelserver.Turn {
	id := filepath.Base(filepath.Dir(r.Workspace()))
	f.mu.Lock()
	file, ok := f.files[id]
	f.mu.Unlock()
	if !ok {
		return modelserver.Turn{Err: &modelserver.APIError{Status: 500, Message: "modelserver: no file for mission " + id}}
	}
	return modelserver.WriteFile(file, "written by "+id+"\n", voyageTurn)(r)
}

// TestRealClaude_VoyageBudgetStopsWhereTheSpendCrossesIt is the second half of issue 15's
// check with the real Claude Code: the voyage of four missions, run one at a time, with a
// $0.05 voyage budget. The spend crosses the budget part-way: the mission that crosses it is
// stopped (failure kind budget, no retry spent) or, crossing at its very end, completes; no
// mission starts once the recorded spend has met the budget; every mission that has not run
// waits with the budget hold's sentence naming the voyage, its spend and its limit; the
// voyage reports blocked with a budget escalation. Raising the limit lets the rest run, and
// the voyage completes with every file landed.
func TestRealClaude_VoyageBudgetStopsWhereTheSpendCrossesIt(t *testing.T) {
	srv := modelserver.Start(t)
	files := &filesByMission{files: map[string]string{}}
	srv.Script(files.script)
	tune := func(c *scheduler.Config) {
		c.Prices = engine.Prices{{Model: "*", Input: 1, Output: 1}}
		c.MaxConcurrency = 1
	}
	h := newLoopHarnessWith(t, []agent.Profile{claudeProfile(t, srv)}, tune, "ANTHROPIC_API_KEY="+apiKey)
	spec := engine.VoyageSpec{Title: "four on a budget", CostLimitUSD: 0.05}
	for _, k := range []string{"a", "b", "c", "d"} {
		spec.Missions = append(spec.Missions, engine.MissionSpec{Key: k, Title: "write " + k, Brief: "Create " + k + ".txt.",
			WriteArea: []string{k + ".txt"}})
	}
	d, err := h.eng.Dispatch(h.ctx, spec, "test")
	require.NoError(t, err)
	files.mu.Lock()
	for k, id := range d.IDs {
		files.files[id] = k + ".txt"
	}
	files.mu.Unlock()
	h.s.Wake()
	vid := d.Voyage.ID

	h.until("the voyage is blocked by its budget", func() bool {
		return h.voyage(vid).Voyage.State == domain.VoyageBlocked
	})
	v := h.voyage(vid)
	require.GreaterOrEqual(t, v.Voyage.Usage.CostUSD, 0.05, "the voyage's recorded spend met its budget: %+v", v.Voyage.Usage)
	esc := voyageEscalation(t, h, vid)
	require.Equal(t, "budget", esc.Kind, "%+v", esc)
	require.Contains(t, esc.Reason, "voyage "+vid+"'s cost budget")
	require.Contains(t, esc.Reason, "of $0.0500")

	// Where it stopped: the missions in attempt-start order; none started after the spend of
	// the attempts ended before it had met the budget.
	type started struct {
		key string
		at  domain.Attempt
	}
	var runs []started
	waiting := 0
	for k, id := range d.IDs {
		m := h.mission(id)
		for _, a := range m.Attempts {
			runs = append(runs, started{k, a})
		}
		if len(m.Attempts) > 0 {
			continue
		}
		waiting++
		require.Equal(t, domain.StatePending, m.Mission.State, k)
		require.NotEmpty(t, m.WhyNotRunning, k)
		why := m.WhyNotRunning[0]
		require.Equal(t, engine.WhyBudget, why.Code, "%s: %+v", k, m.WhyNotRunning)
		require.Contains(t, why.Message, "voyage "+vid+"'s cost budget is spent", k)
		require.Contains(t, why.Message, "of $0.0500", k)
	}
	require.Positive(t, waiting, "the spend crossed the budget before every mission ran: %s", dumpMissions(h.ctx, h.eng))
	sort.Slice(runs, func(i, j int) bool { return runs[i].at.StartedAt.Before(runs[j].at.StartedAt) })
	for i, r := range runs {
		spent := 0.0
		for _, e := range runs[:i] {
			if !e.at.EndedAt.IsZero() && !e.at.EndedAt.After(r.at.StartedAt) {
				spent += e.at.Usage.CostUSD
			}
		}
		require.Less(t, spent, 0.05, "mission %s started after $%.4f of the $0.05 was spent", r.key, spent)
		if r.at.Outcome == domain.OutcomeFailed {
			require.Equal(t, domain.FailureBudget, r.at.Failure.Kind, r.key)
			require.Contains(t, r.at.Failure.Summary, "voyage "+vid+"'s cost budget crossed", r.key)
		}
	}
	t.Logf("blocked at $%.4f with %d attempt(s) run and %d mission(s) waiting; escalation: %s", v.Voyage.Usage.CostUSD, len(runs), waiting, esc.Reason)
	for k, id := range d.IDs {
		require.Equal(t, 0, h.mission(id).Mission.AttemptsUsed, "%s: a budget stop spends no retry", k)
	}

	raised := 1.0
	_, err = h.eng.UpdateVoyage(h.ctx, vid, engine.VoyagePatch{CostLimitUSD: &raised}, "person")
	require.NoError(t, err)
	h.s.Wake()
	h.until("the voyage completes", func() bool { return h.voyage(vid).Voyage.State == domain.VoyageCompleted })
	for k, id := range d.IDs {
		m := h.mission(id)
		require.Equal(t, domain.StateCompleted, m.Mission.State, k)
		require.Equal(t, domain.LandingLanded, m.Mission.Landing, k)
		body, ok := showFile(t, h.repo, "main", k+".txt")
		require.True(t, ok, "%s.txt landed on main", k)
		require.Equal(t, "written by "+id+"\n", body)
	}
	t.Logf("spend: %s", voyageSpend(h, d))
}

// voyageEscalation returns the open escalation of voyage id (the test fails without one).
func voyageEscalation(t *testing.T, h *loopHarness, id string) domain.Escalation {
	t.Helper()
	escs, err := h.eng.Escalations(h.ctx, engine.EscalationFilter{State: "open", VoyageID: id})
	require.NoError(t, err)
	require.NotEmpty(t, escs, "the blocked voyage has an open escalation: %s", dumpMissions(h.ctx, h.eng))
	return escs[0]
}

// voyageSpend is each mission's recorded cost, for the log.
func voyageSpend(h *loopHarness, d engine.Dispatched) string {
	var b strings.Builder
	for k, id := range d.IDs {
		fmt.Fprintf(&b, "%s=$%.4f ", k, h.mission(id).Mission.Usage.CostUSD)
	}
	return b.String()
}
