package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent/refagent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// BenchmarkWakeUpClaim measures, within one process, the time from CreateMission returning
// to the mission being acquired by a claim_mission that was waiting for work: the engine's
// hub signals the waiter in-process (no timer, no polling). Prints p50 and p99.
//
//	go test ./engine/scheduler -run '^$' -bench WakeUpClaim -benchtime 500x
func BenchmarkWakeUpClaim(b *testing.B) {
	h := newHarness(b)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got := make(chan time.Time, 1)
		go func() {
			if err := claimNoWorkspace(h, engine.ClaimRequest{AgentID: "waiter", Wait: 10 * time.Second}); err != nil {
				b.Error(err)
			}
			got <- time.Now()
		}()
		time.Sleep(2 * time.Millisecond) // the claim is waiting
		_, err := h.eng.CreateMission(h.ctx, engine.MissionSpec{Title: "wake", WriteArea: []string{fmt.Sprintf("w%d", i)}}, "bench")
		created := time.Now()
		require.NoError(b, err)
		lat = append(lat, (<-got).Sub(created))
	}
	b.StopTimer()
	reportPercentiles(b, "wake", lat)
}

// BenchmarkWakeUpCrossProcess measures the same across two processes sharing the data dir:
// a helper process creates missions, this one notices through SQLite's data_version
// (WatchExternal polling every 2 ms) and claims them.
//
//	go test ./engine/scheduler -run '^$' -bench WakeUpCrossProcess -benchtime 200x
func BenchmarkWakeUpCrossProcess(b *testing.B) {
	h := newHarness(b)
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	go func() { _ = h.eng.WatchExternal(ctx, 2*time.Millisecond) }()
	self, err := os.Executable()
	require.NoError(b, err)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got := make(chan time.Time, 1)
		go func() {
			if err := claimNoWorkspace(h, engine.ClaimRequest{AgentID: "waiter", Wait: 10 * time.Second}); err != nil {
				b.Error(err)
			}
			got <- time.Now()
		}()
		time.Sleep(2 * time.Millisecond)
		cmd := exec.Command(self, "create-mission", teststore.LocationIn(h.data), h.repo, fmt.Sprintf("x%d", i))
		out, err := cmd.Output()
		require.NoError(b, err)
		var created time.Time
		require.NoError(b, created.UnmarshalText(out))
		lat = append(lat, (<-got).Sub(created))
	}
	b.StopTimer()
	reportPercentiles(b, "wake", lat)
}

// BenchmarkOverheadPerMission runs missions of a reference agent that exits at once with
// concurrency 4 and reports the scheduler's own time per mission — from the tick that
// acquires it to its agent running (minus the workspace checkout), plus from its result to
// its landing (collecting the result, and the landing's own work) — next to the raw cost of
// spawning one process. The time a finished mission waits for the branch's landing worker
// while others land (landing-queue) is reported apart: it is queueing, not work, and grows
// with the batch when results arrive faster than one branch can take them. The git processes
// the scheduler starts are counted from git's trace2 events: per mission, all of them
// (git-procs, and their summed wall time git-ms) and the landing's and the checkout's by
// command (status, merge-tree, merge --ff-only, update-ref, commit, worktree add).
//
//	go test ./engine/scheduler -run '^$' -bench OverheadPerMission -benchtime 20x -count 5
func BenchmarkOverheadPerMission(b *testing.B) {
	trace := traceGit(b)
	h := newHarness(b, func(_ *engine.Options, c *scheduler.Config) { c.MaxConcurrency, c.PerRepository = 4, 4 })
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = h.createB(engine.MissionSpec{Title: fmt.Sprintf("m%d", i), WriteArea: []string{fmt.Sprintf("f%d.txt", i)},
			Brief: fmt.Sprintf("@write f%d.txt \"x\\n\"\n@commit m%d\n@done", i, i)}).ID
	}
	trace.mark(b)
	b.ResetTimer()
	start := time.Now()
	require.NoError(b, h.s.Start(h.ctx))
	for _, id := range ids {
		// Polled every 25 ms: the parts are read from the events afterwards, and a tighter
		// poll (each a full GetMission) takes CPU from the scheduler on a 2-core machine.
		for h.mission(id).Landing != domain.LandingLanded {
			time.Sleep(25 * time.Millisecond)
		}
	}
	wall := time.Since(start)
	b.StopTimer()
	git := trace.count(b)
	var t timing
	for _, id := range ids {
		t.add(h.timings(id))
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64((t.dispatch+t.collect+t.land)/n)/1e6, "overhead-ms/mission")
	b.ReportMetric(float64(t.dispatch/n)/1e6, "dispatch-ms/mission")
	b.ReportMetric(float64(t.collect/n)/1e6, "collect-ms/mission")
	b.ReportMetric(float64(t.land/n)/1e6, "land-ms/mission")
	b.ReportMetric(float64(t.queue/n)/1e6, "landing-queue-ms/mission")
	b.ReportMetric(float64(t.checkout/n)/1e6, "checkout-ms/mission")
	b.ReportMetric(float64(t.agent/n)/1e6, "agent-ms/mission")
	b.ReportMetric(float64(wall/n)/1e6, "wall-ms/mission")
	b.ReportMetric(float64(bareSpawn(b))/1e6, "bare-spawn-ms")
	b.ReportMetric(float64(git.procs)/float64(b.N), "git-procs/mission")
	b.ReportMetric(float64(git.wall/n)/1e6, "git-ms/mission")
	for _, c := range []string{"status", "merge-tree", "merge --ff-only", "update-ref", "commit", "worktree add"} {
		b.ReportMetric(float64(git.byCommand[c])/float64(b.N), "git-"+strings.ReplaceAll(strings.TrimPrefix(c, "merge --"), " ", "-")+"/mission")
	}
}

func (h *harness) createB(spec engine.MissionSpec) domain.Mission {
	c, err := h.eng.CreateMission(h.ctx, spec, "bench")
	require.NoError(h.t, err)
	return c.Mission
}

// timing is where one mission's time went.
type timing struct {
	dispatch time.Duration // lease acquired → agent running, minus the checkout
	checkout time.Duration // making the worktree
	agent    time.Duration // the agent's own run
	collect  time.Duration // agent exit → result recorded (completed)
	land     time.Duration // the landing itself (merge, moving the branch, its record)
	queue    time.Duration // waiting for the branch's landing worker (other missions landing)
}

func (t *timing) add(o timing) {
	t.dispatch += o.dispatch
	t.checkout += o.checkout
	t.agent += o.agent
	t.collect += o.collect
	t.land += o.land
	t.queue += o.queue
}

// timings reads one mission's events, landing record and agent records.
func (h *harness) timings(id string) timing {
	d, err := h.eng.GetMission(h.ctx, id)
	require.NoError(h.t, err)
	evs, err := h.eng.Events(h.ctx, engine.EventFilter{MissionID: id})
	require.NoError(h.t, err)
	at := map[string]time.Time{}
	for _, e := range evs {
		if _, ok := at[e.Type]; !ok {
			at[e.Type] = e.At
		}
	}
	var rec scheduler.RunRecord
	require.NoError(h.t, json.Unmarshal(d.Mission.Run, &rec))
	pid := readJSON[runner.PIDRecord](h.t, filepath.Join(rec.AttemptDir, runner.FilePID))
	exit := readJSON[runner.ExitRecord](h.t, filepath.Join(rec.AttemptDir, runner.FileExit))
	var t timing
	t.checkout = time.Duration(rec.PrepareMS) * time.Millisecond
	t.agent = exit.ExitedAt.Sub(pid.StartedAt)
	t.dispatch = pid.StartedAt.Sub(at["lease.acquired"]) - t.checkout
	t.collect = at["mission.completed"].Sub(exit.ExitedAt)
	t.land = time.Duration(d.Landings[len(d.Landings)-1].DurationMS) * time.Millisecond
	t.queue = at["landing.landed"].Sub(at["mission.completed"]) - t.land
	return t
}

func readJSON[T any](t testing.TB, path string) T {
	var v T
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

// bareSpawn is the median time to start and wait for the reference agent with os/exec.
func bareSpawn(b *testing.B) time.Duration {
	self, err := os.Executable()
	require.NoError(b, err)
	dir := b.TempDir()
	script := filepath.Join(dir, "script")
	require.NoError(b, os.WriteFile(script, []byte("@done\n"), 0o600))
	var ds []time.Duration
	for i := 0; i < 21; i++ {
		t0 := time.Now()
		cmd := exec.Command(self, refagent.Subcommand, "--mission", "m", "--workspace", dir, "--script", script)
		out, err := cmd.CombinedOutput()
		require.NoError(b, err, "%s", out)
		ds = append(ds, time.Since(t0))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func reportPercentiles(b *testing.B, name string, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) float64 { return float64(lat[min(int(q*float64(len(lat))), len(lat)-1)]) / 1e3 }
	b.ReportMetric(p(0.50), name+"-p50-µs")
	b.ReportMetric(p(0.99), name+"-p99-µs")
}

// claimNoWorkspace is a waiting claim handed over without a workspace: the engine's claim
// steps alone, so that the wake-up figures measure the wait and not git.
func claimNoWorkspace(h *harness, req engine.ClaimRequest) error {
	p, err := h.eng.BeginClaim(h.ctx, req)
	if err != nil {
		return err
	}
	_, err = p.HandOver(h.ctx, engine.Workspace{}, nil)
	return err
}
