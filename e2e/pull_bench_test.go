package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// claimCallers is the number of concurrent pull-mode callers of BenchmarkClaimsHTTP.
const claimCallers = 32

// BenchmarkClaimsHTTP measures claims per second: 32 callers, each its own Streamable HTTP
// session, against one real `serve --http` (its own process, SQLite file and git repository),
// each claim a mission with its own write area and a git worktree made for it. The reference,
// measured in the same run, is the engine's acquire-and-start in process on a store of the
// same size (no MCP, no workspace), also from 32 goroutines. b.N is the number of claims;
// run it with a fixed count:
//
//	go test -run '^$' -bench BenchmarkClaimsHTTP -benchtime 200x -count 3 ./e2e/
//
// Metrics: claims/s (HTTP), acquires/s (in process), ratio, and the load average at the end.
//
// The variants: a new worktree per claim (warm pool off, the default), from a warm pool of
// 16, and workspace "main" (the repository's own checkout, read-only: nothing is created,
// which isolates the cost of MCP, HTTP and the engine from git's).
func BenchmarkClaimsHTTP(b *testing.B) {
	for _, v := range []struct {
		name      string
		pool      int
		workspace string
	}{{"worktree", 0, ""}, {"worktree_warm_pool=16", 16, ""}, {"workspace=main", 0, engine.WorkspaceMain}} {
		b.Run(v.name, func(b *testing.B) {
			ref := inProcessAcquires(b, b.N)
			httpRate, gitRate := httpClaims(b, b.N, v.pool, v.workspace)
			b.ReportMetric(httpRate, "claims/s")
			b.ReportMetric(ref, "acquires/s")
			b.ReportMetric(httpRate/ref, "ratio")
			b.ReportMetric(gitRate, "git-worktree-add/s")
			b.Logf("N=%d %s: HTTP %.1f claims/s, in-process %.1f acquires/s, ratio %.4f; plain git worktree add one after another %.1f/s; load average %s",
				b.N, v.name, httpRate, ref, httpRate/ref, gitRate, loadavg())
		})
	}
}

// httpClaims serves n missions over HTTP and returns claims per second for 32 callers, and
// the rate of plain `git worktree add -b` one after another in the same repository right
// after (the physical floor of a claim that makes a worktree).
func httpClaims(b *testing.B, n, pool int, workspace string) (float64, float64) {
	b.Helper()
	b.StopTimer()
	const token = "bench-token"
	extra := ""
	if pool > 0 {
		extra = fmt.Sprintf("warm_pool = %d\n", pool)
	}
	e := newXEnv(b, xsettings{LeaseTTL: 5 * time.Minute, Renew: 10 * time.Second, RepoExtra: extra})
	_, url := e.startHTTP("serve-http", "MCP_SCHEDULER_TOKEN="+token)
	createOwnAreaMissions(b, e, n, "bench", workspace)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cs := newClaimers(b, ctx, url, token, claimCallers)
	if pool > 0 {
		time.Sleep(3 * time.Second) // let the server fill its pool once, as it would between bursts
	}
	var left atomic.Int64
	left.Store(int64(n))
	var failed atomic.Value
	var wg sync.WaitGroup
	b.StartTimer()
	start := time.Now()
	for i := range claimCallers {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				a, body, err := cs.claim(i, fmt.Sprintf("bench-%02d", i), 5)
				if err == nil && !a.Claimed {
					err = fmt.Errorf("not claimed: %s", body)
				}
				if err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return float64(n) / elapsed.Seconds(), gitWorktreeAdds(b, e, 20)
}

// gitWorktreeAdds runs n `git worktree add -b` one after another and returns them per second.
func gitWorktreeAdds(b *testing.B, e *xenv, n int) float64 {
	b.Helper()
	dir := b.TempDir()
	start := time.Now()
	for i := range n {
		e.git("worktree", "add", "-q", "-b", fmt.Sprintf("ref/%d", i), filepath.Join(dir, fmt.Sprint(i)), "main")
	}
	return float64(n) / time.Since(start).Seconds()
}

// inProcessAcquires is the reference: n acquire-and-start calls from 32 goroutines on a
// fresh store with n missions, each with its own write area.
func inProcessAcquires(b *testing.B, n int) float64 {
	b.Helper()
	b.StopTimer()
	ctx := context.Background()
	st, err := teststore.Open(ctx, teststore.Location(b))
	require.NoError(b, err)
	defer st.Close()
	e := engine.New(st, engine.Options{DefaultRepository: "/repo"})
	for i := range n {
		_, err := e.CreateMission(ctx, engine.MissionSpec{Title: "ref", Brief: "ref", WriteArea: []string{fmt.Sprintf("ref/%d/**", i)}}, "bench")
		require.NoError(b, err)
	}
	var left atomic.Int64
	left.Store(int64(n))
	var failed atomic.Value
	var wg sync.WaitGroup
	b.StartTimer()
	start := time.Now()
	for i := range claimCallers {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if _, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: fmt.Sprintf("ref-%02d", i), Start: true}); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return float64(n) / elapsed.Seconds()
}
