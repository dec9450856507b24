//go:build heavy

package engine_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

const crashKills = 60

func init() {
	helperModes["crash-writer"] = helperCrashWriter
	helperModes["claim-launch"] = helperClaimLaunch
}

// TestHeavy_SIGKILLedWriterLeavesConsistentDatabase kills a writer process with SIGKILL at
// random moments after it committed work (never a fixed time: a loaded machine makes it
// slow), 60 times, on one database file. The writer runs 4 goroutines doing a random
// mix of creates, dispatches, acquires (with and without start), starts, heartbeats,
// completes, fails and reaps; some kills land while it opens the database. After every kill
// the file is reopened: PRAGMA integrity_check is ok, the per-state counters match the rows,
// replaying the event log gives the tables, and no mission is leased or running without a
// lease expiry; with the clock past every lease, ReapExpired requeues all of them, and the
// log still replays to the tables.
func TestHeavy_SIGKILLedWriterLeavesConsistentDatabase(t *testing.T) {
	ctx := context.Background()
	path := teststore.Location(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	stranded, reaped := 0, 0
	for i := 0; i < crashKills; i++ {
		k := startChild(t, "crash-writer", envDB+"="+path, fmt.Sprintf("%s=%d", envWorker, i))
		if i%10 == 3 {
			time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond) // a random moment to kill: while it opens and migrates
		} else {
			before := eventCount(t, path)
			require.Equal(t, "ready", k.line(), "writer %d: %s", i, k.stderr)
			require.NoError(t, k.stdin.Close())
			// Kill it mid-work: once it committed something (however slow the machine is),
			// then a random moment later.
			waitForEvents(t, path, before, k)
			time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond) // the random moment of the kill
		}
		require.NoError(t, k.cmd.Process.Signal(syscall.SIGKILL))
		_ = k.cmd.Wait()
		if ws, ok := k.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && !ws.Signaled() {
			t.Fatalf("writer %d ended by itself (%v) before the kill: %s", i, k.cmd.ProcessState, k.stderr)
		}
		s, r := checkAfterCrash(t, ctx, path)
		stranded += s
		reaped += r
	}
	db := rawDB(t, path)
	missions := queryInt(t, db, `SELECT count(*) FROM missions`)
	events := queryInt(t, db, `SELECT count(*) FROM events`)
	t.Logf("%d kills: %d missions, %d events written; %d leases stranded by the kills, all %d requeued by ReapExpired",
		crashKills, missions, events, stranded, reaped)
	require.Positive(t, missions, "the writers got work done between kills")
	require.Positive(t, stranded, "some kills stranded a lease")
}

// eventCount is the number of events in the database at path (0 before it exists).
func eventCount(t *testing.T, path string) int {
	t.Helper()
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil {
		return 0 // not migrated yet (a writer killed while it opened the file)
	}
	return n
}

// waitForEvents waits until the database holds more than before events: the writer k
// committed work since it started.
func waitForEvents(t *testing.T, path string, before int, k *child) {
	t.Helper()
	testenv.WaitForState(t, "the writer to commit work", func() bool { return eventCount(t, path) > before },
		func() string { return "its stderr: " + k.stderr.String() })
}

// checkAfterCrash verifies the database left by a killed writer and reaps what it stranded.
func checkAfterCrash(t *testing.T, ctx context.Context, path string) (stranded, reaped int) {
	t.Helper()
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, 0 // killed before it created the file
	}
	db := rawDB(t, path)
	var ok string
	require.NoError(t, db.QueryRow(`PRAGMA integrity_check`).Scan(&ok))
	require.Equal(t, "ok", ok)
	require.Zero(t, queryInt(t, db, `SELECT count(*) FROM missions WHERE state IN ('leased','running') AND lease_expires_at IS NULL`),
		"a mission is leased or running without a lease expiry")
	require.Zero(t, queryInt(t, db, `SELECT count(*) FROM mission_counts AS c
 WHERE c.n <> (SELECT count(*) FROM missions AS m WHERE m.state = c.state)`), "per-state counters match the rows")
	stranded = queryInt(t, db, `SELECT count(*) FROM missions WHERE state IN ('leased','running')`)
	require.NoError(t, db.Close())

	st, err := teststore.Open(ctx, path)
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	e := engine.New(st, engine.Options{Clock: engine.NewFakeClock(time.Now().Add(2 * time.Hour)), DefaultRepository: "/repo"})
	diffs, err := e.VerifyReplay(ctx)
	require.NoError(t, err)
	require.Empty(t, diffs)
	for {
		ids, err := e.ReapExpired(ctx, nil)
		require.NoError(t, err)
		reaped += len(ids)
		if len(ids) == 0 {
			break
		}
	}
	require.Equal(t, stranded, reaped, "ReapExpired requeues every stranded lease")
	live, err := e.ListMissions(ctx, engine.MissionFilter{States: []domain.MissionState{domain.StateLeased, domain.StateRunning}})
	require.NoError(t, err)
	require.Empty(t, live)
	diffs, err = e.VerifyReplay(ctx)
	require.NoError(t, err)
	require.Empty(t, diffs)
	return stranded, reaped
}

// helperCrashWriter writes until it is killed: 4 goroutines, each a random mix of operations.
// Caller errors (a lease lost to another goroutine, nothing runnable) are expected; anything
// else is printed to stderr and ends the process with status 1.
func helperCrashWriter() int {
	exitWithParent()
	st, e, err := openHelperEngine(30 * time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Stdout.WriteString("ready\n")
	waitForRelease()
	ctx := context.Background()
	worker, _ := strconv.Atoi(os.Getenv(envWorker))
	fail := make(chan error, 4)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := crashWorker{e: e, ctx: ctx, rng: rand.New(rand.NewPCG(uint64(worker), uint64(g))),
				agent: fmt.Sprintf("agent-%d-%d", worker, g)}
			for {
				if err := w.step(); err != nil && !domain.CallerError(err) {
					fail <- err
					return
				}
			}
		}()
	}
	err = <-fail
	fmt.Fprintln(os.Stderr, err)
	_ = st.Close()
	return 1
}

type crashWorker struct {
	e      *engine.Engine
	ctx    context.Context
	rng    *rand.Rand
	agent  string
	fences []domain.Fence
	recent []string
}

func (w *crashWorker) step() error {
	switch n := w.rng.IntN(100); {
	case n < 25:
		area := []string{fmt.Sprintf("%s/%d/**", w.agent, w.rng.IntN(1000))}
		var deps []string
		if len(w.recent) > 0 && w.rng.IntN(4) == 0 {
			deps = []string{w.recent[w.rng.IntN(len(w.recent))]}
		}
		c, err := w.e.CreateMission(w.ctx, engine.MissionSpec{Title: "crash", WriteArea: area, DependsOn: deps}, "test")
		if err == nil {
			w.remember(c.Mission.ID)
		}
		return err
	case n < 30:
		spec := engine.VoyageSpec{Title: "crash voyage"}
		for i := 0; i < 1+w.rng.IntN(5); i++ {
			spec.Missions = append(spec.Missions, engine.MissionSpec{Key: fmt.Sprintf("k%d", i), Title: "m",
				WriteArea: []string{fmt.Sprintf("%s/v%d/**", w.agent, w.rng.IntN(1000))}})
		}
		_, err := w.e.Dispatch(w.ctx, spec, "test")
		return err
	case n < 50:
		m, err := w.e.Acquire(w.ctx, engine.AcquireRequest{AgentID: w.agent, Start: w.rng.IntN(2) == 0})
		if err == nil {
			w.fences = append(w.fences, m.Fence())
			if m.State == domain.StateLeased {
				_, err = w.e.Start(w.ctx, m.Fence())
			}
		}
		return err
	case n < 55:
		_, err := w.e.ReapExpired(w.ctx, nil)
		return err
	}
	if len(w.fences) == 0 {
		return nil
	}
	i := w.rng.IntN(len(w.fences))
	f := w.fences[i]
	var err error
	switch n := w.rng.IntN(10); {
	case n < 4:
		_, err = w.e.Heartbeat(w.ctx, f)
		return err
	case n < 5:
		run, _ := json.Marshal(map[string]any{"pid": os.Getpid()})
		return w.e.SetRun(w.ctx, f, run, nil)
	case n < 8:
		_, err = w.e.Complete(w.ctx, f, domain.WorkerResult{Summary: "done"})
	default:
		_, err = w.e.Fail(w.ctx, f, engine.FailRequest{Failure: domain.Failure{Kind: "test", Summary: "boom"}})
	}
	w.fences = append(w.fences[:i], w.fences[i+1:]...)
	return err
}

func (w *crashWorker) remember(id string) {
	w.recent = append(w.recent, id)
	if len(w.recent) > 20 {
		w.recent = w.recent[1:]
	}
}

// TestB13_KillBetweenAcquireAndSetRunLeavesReapableMission kills the process at each step of
// the claim-and-launch sequence (shared/cases B13): after acquire+start committed but before
// the scheduler recorded the process identity (SetRun), and after it. State, lease expiry,
// epoch and attempt are written by one statement in one row, so the mission is running with
// a lease that expires; ReapExpired requeues it and records the lost attempt as abandoned
// (its agent was never heard from).
func TestB13_KillBetweenAcquireAndSetRunLeavesReapableMission(t *testing.T) {
	ctx := context.Background()
	for _, step := range []string{"after-acquire", "after-setrun"} {
		t.Run(step, func(t *testing.T) {
			path := teststore.Location(t)
			st, err := teststore.Open(ctx, path)
			require.NoError(t, err)
			e := engine.New(st, engine.Options{DefaultRepository: "/repo"})
			c, err := e.CreateMission(ctx, engine.MissionSpec{Title: "b13", WriteArea: []string{"a/**"}}, "test")
			require.NoError(t, err)
			require.NoError(t, st.Close())
			id := c.Mission.ID

			k := startChild(t, "claim-launch", envDB+"="+path, envArg+"="+id+" "+step)
			require.Equal(t, step, k.line(), "helper: %s", k.stderr)
			require.NoError(t, k.cmd.Process.Signal(syscall.SIGKILL))
			_ = k.cmd.Wait()

			// Read the row the killed process left through the store seam (a fresh store, as a
			// restarted server would open), so that the check holds on either backend.
			st, err = teststore.Open(ctx, path)
			require.NoError(t, err)
			defer st.Close()
			left, err := engine.New(st, engine.Options{DefaultRepository: "/repo"}).GetMission(ctx, id)
			require.NoError(t, err)
			lm := left.Mission
			require.Equal(t, domain.StateRunning, lm.State)
			require.Equal(t, "launcher", lm.Lease.Owner)
			require.False(t, lm.Lease.ExpiresAt.IsZero(), "a running mission always has a lease expiry")
			require.EqualValues(t, 1, lm.Lease.Epoch)
			require.Equal(t, 1, lm.Attempt)
			require.Equal(t, step == "after-setrun", len(lm.Run) > 0, "run recorded: %s", lm.Run)

			clock := engine.NewFakeClock(lm.Lease.ExpiresAt.Add(time.Second))
			e = engine.New(st, engine.Options{Clock: clock, DefaultRepository: "/repo"})
			reaped, err := e.ReapExpired(ctx, nil)
			require.NoError(t, err)
			require.Equal(t, []string{id}, reaped)
			d, err := e.GetMission(ctx, id)
			require.NoError(t, err)
			require.Equal(t, domain.StatePending, d.Mission.State)
			require.Len(t, d.Attempts, 1)
			// nothing was ever heard from the launcher's agent: the attempt is abandoned (issue
			// 11), costs no retry budget and counts towards the abandon limit
			require.Equal(t, domain.OutcomeAbandoned, d.Attempts[0].Outcome)
			require.Equal(t, 1, d.Mission.Abandons)
			require.Zero(t, d.Mission.AttemptsUsed)
			diffs, err := e.VerifyReplay(ctx)
			require.NoError(t, err)
			require.Empty(t, diffs)
		})
	}
}

// helperClaimLaunch acquires+starts the mission named in envArg, records the process
// identity when the step says so, prints the step and waits to be killed.
func helperClaimLaunch() int {
	exitWithParent()
	st, e, err := openHelperEngine(time.Minute)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	ctx := context.Background()
	id, step, _ := strings.Cut(os.Getenv(envArg), " ")
	m, err := e.Acquire(ctx, engine.AcquireRequest{AgentID: "launcher", MissionID: id, Start: true})
	if err == nil && step == "after-setrun" {
		run, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "started": time.Now()})
		err = e.SetRun(ctx, m.Fence(), run, nil)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Stdout.WriteString(step + "\n")
	waitForRelease() // never released: the parent kills this process here
	return 0
}
