//go:build heavy

package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

const (
	concProcs      = 8
	concGoroutines = 8
	concMissions   = 10_000
)

func init() { helperModes["acquire-complete"] = helperAcquireComplete }

// TestHeavy_EveryAttemptLeasedOnceAcross8Processes: 8 OS processes × 8 goroutines acquire
// (acquire+start in one step) and complete missions from one database file holding 10,000
// runnable missions until none is left. Every mission is acquired exactly once (one epoch,
// one attempt, one lease.acquired event, one attempt row, named by exactly one worker), and
// no error, SQLITE_BUSY included, reaches any caller.
func TestHeavy_EveryAttemptLeasedOnceAcross8Processes(t *testing.T) {
	ctx := context.Background()
	path := teststore.Location(t)
	st, err := teststore.Open(ctx, path)
	require.NoError(t, err)
	e := engine.New(st, engine.Options{DefaultRepository: "/repo"})
	for v := 0; v < concMissions/engine.MaxMissionsPerDispatch; v++ {
		spec := engine.VoyageSpec{Title: fmt.Sprintf("voyage %d", v)}
		for i := 0; i < engine.MaxMissionsPerDispatch; i++ {
			n := v*engine.MaxMissionsPerDispatch + i
			// Disjoint write areas: every mission may run beside every other one.
			spec.Missions = append(spec.Missions, engine.MissionSpec{Key: fmt.Sprintf("k%d", i), Title: "m",
				WriteArea: []string{fmt.Sprintf("w%05d/**", n)}})
		}
		_, err := e.Dispatch(ctx, spec, "test")
		require.NoError(t, err)
	}
	require.NoError(t, st.Close())

	kids := make([]*child, concProcs)
	for p := range kids {
		kids[p] = startChild(t, "acquire-complete", envDB+"="+path, fmt.Sprintf("%s=%d", envWorker, p))
		require.Equal(t, "ready", kids[p].line(), "helper %d: %s", p, kids[p].stderr)
	}
	start := time.Now()
	for _, k := range kids {
		require.NoError(t, k.stdin.Close()) // go
	}
	seen := map[string]int{}
	for p, k := range kids {
		n := 0
		for l := k.line(); l != ""; l = k.line() {
			seen[l]++
			n++
		}
		err := k.cmd.Wait()
		require.NoError(t, err, "helper %d: %s", p, k.stderr)
		require.Empty(t, k.stderr.String(), "helper %d reported errors", p)
		t.Logf("process %d completed %d missions", p, n)
	}
	elapsed := time.Since(start)
	t.Logf("%d missions acquired+started and completed by %d×%d workers in %v (%.0f missions/s)",
		len(seen), concProcs, concGoroutines, elapsed, float64(len(seen))/elapsed.Seconds())

	require.Len(t, seen, concMissions, "every mission was acquired by some worker")
	for id, n := range seen {
		require.Equal(t, 1, n, "%s was handed to %d workers", id, n)
	}
	db := rawDB(t, path)
	require.Equal(t, concMissions, queryInt(t, db, `SELECT count(*) FROM missions WHERE state = 'completed' AND epoch = 1 AND attempt = 1`))
	require.Zero(t, queryInt(t, db, `SELECT count(*) FROM (SELECT mission_id FROM events WHERE type = 'lease.acquired'
 GROUP BY mission_id HAVING count(*) <> 1)`), "one lease.acquired event per mission")
	require.Equal(t, concMissions, queryInt(t, db, `SELECT count(*) FROM events WHERE type = 'lease.acquired'`))
	require.Equal(t, concMissions, queryInt(t, db, `SELECT count(DISTINCT mission_id) FROM attempts WHERE outcome = 'completed' AND attempt = 1 AND epoch = 1`))
	require.Equal(t, concMissions, queryInt(t, db, `SELECT count(*) FROM attempts`), "one attempt row per mission")
	require.Equal(t, concMissions, queryInt(t, db, `SELECT n FROM mission_counts WHERE state = 'completed'`))

	st, err = teststore.Open(ctx, path)
	require.NoError(t, err)
	defer st.Close()
	diffs, err := engine.New(st, engine.Options{}).VerifyReplay(ctx)
	require.NoError(t, err)
	require.Empty(t, diffs)
}

// helperAcquireComplete runs concGoroutines workers that acquire+start and complete until
// nothing is runnable; each completed mission's id goes to stdout, each error to stderr.
func helperAcquireComplete() int {
	exitWithParent()
	st, e, err := openHelperEngine(10 * time.Minute)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	ctx := context.Background()
	os.Stdout.WriteString("ready\n")
	waitForRelease()
	var mu sync.Mutex
	var done []string
	var errs []error
	var wg sync.WaitGroup
	for g := 0; g < concGoroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agentID := fmt.Sprintf("agent-%s-%d", os.Getenv(envWorker), g)
			for {
				m, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: agentID, Start: true})
				if errors.Is(err, domain.ErrNoWork) {
					return
				}
				if err == nil {
					_, err = e.Complete(ctx, m.Fence(), domain.WorkerResult{Summary: "done"})
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					done = append(done, m.ID)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	os.Stdout.WriteString(strings.Join(done, "\n") + "\n")
	for _, err := range errs {
		fmt.Fprintln(os.Stderr, err)
	}
	if len(errs) > 0 {
		return 1
	}
	return 0
}
