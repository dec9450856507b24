//go:build heavy

package scheduler_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// b12Options: lease TTL 5 s (the case's), the real loop with its keeper.
func b12Options(eo *engine.Options, sc *scheduler.Config) {
	eo.LeaseTTL = 5 * time.Second
	sc.LeaderLease = 5 * time.Second
}

// startLoop runs the harness's scheduler as serve and daemon do (ticks, keeper, wake-ups).
func (h *harness) startLoop() {
	require.NoError(h.t, h.s.Start(h.ctx))
}

// TestHeavy_B12_LongAgentKeepsItsLease (shared/cases B12): agents that run 20 s under a 5 s
// lease — one heartbeating every second, one silent (its process is alive, which is proof
// enough) — keep their leases through the loop: sampled every 100 ms the lease never lapses,
// nothing is reaped or handed to a second agent, and each lands once from attempt 1.
func TestHeavy_B12_LongAgentKeepsItsLease(t *testing.T) {
	h := newHarness(t, b12Options)
	beating := h.create(engine.MissionSpec{Title: "heartbeats", WriteArea: []string{"beat.txt"},
		Brief: "@heartbeat 1s\n@sleep 20s\n@write beat.txt \"beat\\n\"\n@commit b12 beat\n@done"})
	silent := h.create(engine.MissionSpec{Title: "silent", WriteArea: []string{"silent.txt"},
		Brief: "@sleep 20s\n@write silent.txt \"silent\\n\"\n@commit b12 silent\n@done"})
	h.startLoop()
	lapses := map[string]int{}
	h.waitFor("both land", func() bool {
		done := true
		for _, id := range []string{beating.ID, silent.ID} {
			m := h.mission(id)
			if m.State == domain.StateRunning && !m.Lease.ExpiresAt.After(time.Now()) {
				lapses[id]++
			}
			done = done && m.Landing == domain.LandingLanded
		}
		return done
	})
	require.Empty(t, lapses, "a running mission's lease was seen expired")
	log := git(t, h.repo, "log", "--format=%s", "main")
	for _, id := range []string{beating.ID, silent.ID} {
		d, err := h.eng.GetMission(h.ctx, id)
		require.NoError(t, err)
		require.Equal(t, 1, d.Mission.Attempt, "never handed to a second agent")
		require.Len(t, d.Attempts, 1)
		require.Equal(t, domain.OutcomeCompleted, d.Attempts[0].Outcome)
		require.GreaterOrEqual(t, d.Attempts[0].EndedAt.Sub(d.Attempts[0].StartedAt), 19*time.Second, "it really ran 20 s")
	}
	require.Equal(t, 1, countLines(log, "b12 beat"))
	require.Equal(t, 1, countLines(log, "b12 silent"))
	expired, err := h.eng.Events(h.ctx, engine.EventFilter{Types: []string{"lease.expired"}})
	require.NoError(t, err)
	require.Empty(t, expired)
}

// TestHeavy_B12_BlockedRenewalStopsTheAgentFirst (shared/cases B12, variant): while an agent
// runs, the test holds the database's write lock for 8 s (as another process could), so no
// lease renewal can be written and the 5 s lease runs out (SQLite: BEGIN IMMEDIATE;
// PostgreSQL: the missions table locked in EXCLUSIVE mode, see holdWriteLock). The scheduler must stop the
// agent's process group before the lease expires — before anyone could take the mission —
// and must not use its late result; once the lock is gone the mission is reclaimed, runs
// again and lands once, from the second attempt.
func TestHeavy_B12_BlockedRenewalStopsTheAgentFirst(t *testing.T) {
	h := newHarness(t, b12Options)
	m := h.create(engine.MissionSpec{Title: "blocked renewals", WriteArea: []string{"b12.txt"}, RetryBudget: ptr(2),
		Brief: "@heartbeat 1s\n@write b12.txt \"b12\\n\"\n@commit b12 work\n@sleep 10s\n@done"})
	h.startLoop()
	h.waitFor("the agent runs", func() bool {
		mm := h.mission(m.ID)
		return mm.State == domain.StateRunning && len(mm.Run) > 0 && strings.Contains(string(mm.Run), `"pid"`)
	})
	renewals, last := 0, h.mission(m.ID).Lease.ExpiresAt
	h.waitFor("the lease renewed twice while the agent runs", func() bool {
		if e := h.mission(m.ID).Lease.ExpiresAt; e.After(last) {
			renewals, last = renewals+1, e
		}
		return renewals >= 2
	})
	pid := runPID(t, h.mission(m.ID))

	unlock := holdWriteLock(t, h.ctx, teststore.LocationIn(h.data))
	locked := time.Now()
	expires := h.mission(m.ID).Lease.ExpiresAt // the last renewal that could commit

	var goneAt time.Time
	var wg sync.WaitGroup
	wg.Go(func() { // samples the agent's group for the 8 s the lock is held (the case's scenario)
		for time.Since(locked) < 8*time.Second {
			if goneAt.IsZero() && len(groupMembers(pid)) == 0 {
				goneAt = time.Now()
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	wg.Wait()
	unlock()
	t.Logf("lease expiry %v after the lock; agent group gone %v after the lock", expires.Sub(locked).Round(time.Millisecond),
		goneAt.Sub(locked).Round(time.Millisecond))
	require.False(t, goneAt.IsZero(), "the agent's process group was stopped while renewals were blocked")
	require.True(t, goneAt.Before(expires), "stopped before its lease expired (gone %v, expiry %v)", goneAt, expires)

	h.waitFor("it is reclaimed and lands", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })
	d, err := h.eng.GetMission(h.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, 2, d.Mission.Attempt)
	require.Equal(t, domain.OutcomeFailed, d.Attempts[0].Outcome)
	require.Contains(t, d.Attempts[0].Summary+d.Attempts[0].Failure.Summary, "lease")
	require.Len(t, d.Landings, 1)
	require.Equal(t, 2, d.Landings[0].Attempt, "only the second attempt's work lands")
	stdout, err := os.ReadFile(filepath.Join(h.data, "attempts", m.ID, "a1", runner.FileStdout))
	require.NoError(t, err)
	require.Contains(t, string(stdout), `"worker.result"`, "the stopped agent did report a (late) result")
	require.Equal(t, 1, countLines(git(t, h.repo, "log", "--format=%s", "main"), "b12 work"), "landed once")
}

// holdWriteLock blocks every write to the store at loc, as another process could, until
// the returned function is called; reads go on. SQLite: BEGIN IMMEDIATE takes the
// database's write lock. PostgreSQL: LOCK TABLE missions IN EXCLUSIVE MODE, in a
// transaction of a connection of its own, conflicts with every UPDATE, INSERT and DELETE
// of missions (and SELECT … FOR UPDATE) and lets plain reads through; a renewal waits on it.
func holdWriteLock(t *testing.T, ctx context.Context, loc string) (unlock func()) {
	t.Helper()
	switch b := teststore.Backend(); b {
	case teststore.SQLite:
		// busy_timeout: BEGIN IMMEDIATE waits for a write of the scheduler's in progress
		// instead of failing at once with SQLITE_BUSY (seen under load).
		db, err := sql.Open("sqlite", "file:"+loc+"?_pragma=busy_timeout(10000)")
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		conn, err := db.Conn(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close() })
		_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
		require.NoError(t, err)
		return func() {
			_, err := conn.ExecContext(context.Background(), "ROLLBACK")
			require.NoError(t, err)
		}
	case teststore.Postgres:
		conn, err := pgx.Connect(ctx, loc)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close(context.Background()) })
		tx, err := conn.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, "LOCK TABLE missions IN EXCLUSIVE MODE")
		require.NoError(t, err)
		return func() { require.NoError(t, tx.Rollback(context.Background())) }
	default:
		t.Fatalf("holdWriteLock: no write lock for backend %q", b)
		return nil
	}
}

// groupMembers lists the live processes of process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, en := range entries {
		pid, err := strconv.Atoi(en.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", en.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}
