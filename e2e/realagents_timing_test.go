package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// missionTiming splits one landed mission's time, for docs/benchmarks.md "End to end".
// Figures are of its last attempt: Dispatch is lease acquired → agent process started minus
// Checkout (making the worktree); Agent is the agent process's own run (pid.json started_at →
// exit.json exited_at, written by the shim); Collect is agent exit → landed on the target
// (reading the result, committing what the agent left, merging, checks, moving the branch).
type missionTiming struct {
	Key      string
	Kind     string
	Attempts int
	Queue    time.Duration // created → first lease (waiting for dependencies, slots, backoff)
	Dispatch time.Duration
	Checkout time.Duration
	Agent    time.Duration
	Collect  time.Duration
	// Carried: the mission's work landed with its repair mission's (no landing of its own).
	Carried bool
}

// Overhead is the scheduler's own time around the agent's run.
func (m missionTiming) Overhead() time.Duration { return m.Dispatch + m.Checkout + m.Collect }

// collectTimings reads the timings of every landed mission of a voyage from the events and
// the attempt records under dataDir.
func collectTimings(t *testing.T, ctx context.Context, eng *engine.Engine, dataDir, voyageID string) []missionTiming {
	t.Helper()
	ms, err := eng.ListMissions(ctx, engine.MissionFilter{VoyageID: voyageID, Limit: 1000})
	require.NoError(t, err)
	var out []missionTiming
	for _, m := range ms {
		if m.Landing != domain.LandingLanded || len(m.Run) == 0 {
			continue
		}
		evs, err := eng.Events(ctx, engine.EventFilter{MissionID: m.ID})
		require.NoError(t, err)
		first, last := map[string]time.Time{}, map[string]time.Time{}
		for _, e := range evs {
			if _, ok := first[e.Type]; !ok {
				first[e.Type] = e.At
			}
			last[e.Type] = e.At
		}
		var rec scheduler.RunRecord
		require.NoError(t, json.Unmarshal(m.Run, &rec))
		dir := rec.AttemptDir
		if dir == "" {
			dir = filepath.Join(dataDir, "attempts", m.ID, fmt.Sprintf("a%d", m.Attempt))
		}
		var pid runner.PIDRecord
		var exit runner.ExitRecord
		readRecord(t, filepath.Join(dir, runner.FilePID), &pid)
		readRecord(t, filepath.Join(dir, runner.FileExit), &exit)
		mt := missionTiming{Key: m.Key, Kind: string(m.Kind), Attempts: m.Attempt,
			Queue:    first["lease.acquired"].Sub(m.CreatedAt),
			Checkout: time.Duration(rec.PrepareMS) * time.Millisecond,
			Agent:    exit.ExitedAt.Sub(pid.StartedAt),
			Collect:  last["landing.landed"].Sub(exit.ExitedAt)}
		mt.Dispatch = pid.StartedAt.Sub(last["lease.acquired"]) - mt.Checkout
		if _, ok := last["landing.landed"]; !ok {
			mt.Carried, mt.Collect = true, 0
		}
		if mt.Key == "" {
			mt.Key = m.Title
			if len(m.SubjectID) > 4 {
				mt.Key = string(m.Kind) + " of …" + m.SubjectID[len(m.SubjectID)-4:]
			}
		}
		out = append(out, mt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func readRecord(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), "%s", b)
}

// logTimings prints a voyage's wall time and each mission's split in one block that
// docs/benchmarks.md quotes ("e2e timing" lines; run with -v to see them).
func logTimings(t *testing.T, name string, wall time.Duration, ms []missionTiming, extra ...string) {
	t.Helper()
	var b strings.Builder
	var agentSum, overSum time.Duration
	fmt.Fprintf(&b, "e2e timing: %s: voyage wall %s, %d landed missions%s\n", name, ms2(wall), len(ms), strings.Join(extra, ""))
	n := time.Duration(0)
	for _, m := range ms {
		if m.Carried {
			fmt.Fprintf(&b, "e2e timing:   %-14s kind=%-6s attempts=%d queue=%s dispatch=%s checkout=%s agent=%s (landed with its repair mission)\n",
				m.Key, m.Kind, m.Attempts, ms2(m.Queue), ms2(m.Dispatch), ms2(m.Checkout), ms2(m.Agent))
			continue
		}
		n++
		agentSum += m.Agent
		overSum += m.Overhead()
		fmt.Fprintf(&b, "e2e timing:   %-14s kind=%-6s attempts=%d queue=%s dispatch=%s checkout=%s agent=%s collect+land=%s overhead=%s\n",
			m.Key, m.Kind, m.Attempts, ms2(m.Queue), ms2(m.Dispatch), ms2(m.Checkout), ms2(m.Agent), ms2(m.Collect), ms2(m.Overhead()))
	}
	if n > 0 {
		fmt.Fprintf(&b, "e2e timing:   mean per mission: agent %s, scheduler overhead %s (%.0f%% of the agent's run)\n",
			ms2(agentSum/n), ms2(overSum/n), 100*float64(overSum)/float64(agentSum))
	}
	t.Log("\n" + b.String())
}

func ms2(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

// voyageWall is a settled voyage's time from dispatch to settled, as the scheduler recorded it.
func voyageWall(v domain.Voyage) time.Duration { return v.SettledAt.Sub(v.CreatedAt) }
