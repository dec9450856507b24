package storage

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// historyTables are the tables that grow with every mission ever run: a statement the
// scheduler runs each tick, or a listing filter, must never walk one of them whole.
var historyTables = map[string]bool{"missions": true, "attempts": true, "events": true, "voyages": true,
	"escalations": true, "landings": true, "workspaces": true, "waves": true, "dependencies": true, "write_areas": true}

// liveIndexes are partial indexes whose rows are live work only (pending, leased, running,
// landing, deadline still to be missed): walking one costs the live set, not the history.
var liveIndexes = map[string]bool{"missions_pick": true, "missions_live": true,
	"missions_landing_queue": true, "missions_landing_awaiting": true, "missions_deadline": true}

// listIndexes serve list_missions filters over the whole history (a repository's, a
// persona's, a kind's, a landing state's missions): no per-tick statement may use one.
var listIndexes = map[string]bool{"missions_repository_id": true, "missions_persona_id": true,
	"missions_kind_id": true, "missions_landing_id": true}

var indexRe = regexp.MustCompile(`INDEX (\w+)`)

// listIndexUses returns the lines of q's plan that use a list-only index.
func listIndexUses(t *testing.T, s *Store, q string, args ...any) []string {
	t.Helper()
	var bad []string
	for _, l := range queryPlan(t, s, q, args...) {
		if m := indexRe.FindStringSubmatch(l); m != nil && listIndexes[m[1]] {
			bad = append(bad, l)
		}
	}
	return bad
}

var (
	scanRe = regexp.MustCompile(`^SCAN (\w+)(?: USING (?:COVERING )?INDEX (\w+))?`)
	// A range on the key alone walks the table from the cursor, testing every row against
	// the other filters: a full scan in all but name once they match few rows.
	keyRangeRe = regexp.MustCompile(`^SEARCH (\w+) USING (?:INTEGER PRIMARY KEY|(?:COVERING )?INDEX sqlite_autoindex_\w+) \((?:id|seq|rowid)>\?\)$`)
	aliasRe    = regexp.MustCompile(`(?i)\b(\w+)\s+AS\s+(\w+)\b`)
)

// fullScans returns the lines of q's plan that walk a history table whole: a SCAN not of
// a live partial index, or a search by a key range alone.
func fullScans(t *testing.T, s *Store, q string, args ...any) []string {
	t.Helper()
	alias := map[string]string{}
	for _, m := range aliasRe.FindAllStringSubmatch(q, -1) {
		alias[m[2]] = m[1]
	}
	var bad []string
	for _, l := range queryPlan(t, s, q, args...) {
		m := scanRe.FindStringSubmatch(l)
		if m == nil {
			if k := keyRangeRe.FindStringSubmatch(l); k != nil {
				m = []string{l, k[1], ""}
			} else {
				continue
			}
		}
		table := m[1]
		if a, ok := alias[table]; ok {
			table = a
		}
		if historyTables[table] && !liveIndexes[m[2]] {
			bad = append(bad, l)
		}
	}
	return bad
}

// seedHistory writes n finished missions (completed and landed, each with an attempt and
// events), in one transaction, as years of use would leave them.
func seedHistory(t *testing.T, s *Store, n int) {
	t.Helper()
	rawExec(t, s, func(tx *sql.Tx) error {
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("m_hist%06d", i)
			if _, err := tx.Exec(`INSERT INTO missions (id, title, brief, repository, state, landing, attempt, profile, created_at, updated_at, finished_at)
 VALUES (?, 'old', 'old', '/repo', 'completed', 'landed', 1, 'ref', ?, ?, ?)`, id, i, i, i); err != nil {
				return err
			}
			if _, err := tx.Exec(`INSERT INTO attempts (mission_id, attempt, epoch, profile, outcome, ended_at) VALUES (?, 1, 1, 'ref', 'completed', ?)`, id, i); err != nil {
				return err
			}
			if _, err := tx.Exec(`INSERT INTO events (at, type, mission_id) VALUES (?, 'mission.completed', ?)`, i, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// stepClock is a clock that tests move forward.
type stepClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.at }

func (c *stepClock) add(d time.Duration) { c.mu.Lock(); c.at = c.at.Add(d); c.mu.Unlock() }

// TestTickPlan_NoStatementWalksTheHistory runs real scheduler ticks over a store holding
// history and live work of every kind the tick reads (a voyage being settled, pending
// missions held for want of a profile, an expired lease to reap, a missed deadline, a
// landing waiting, an external agent) and checks the plan of every statement they ran.
func TestTickPlan_NoStatementWalksTheHistory(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	ran := map[string][]any{}
	dir := t.TempDir()
	s, err := Open(ctx, filepath.Join(dir, "scheduler.db"), Options{Trace: func(q string, args []any) {
		mu.Lock()
		ran[q] = args
		mu.Unlock()
	}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	seedHistory(t, s, 500)

	clock := &stepClock{at: time.Now()}
	now := clock.Now
	eng := engine.New(s, engine.Options{DefaultRepository: "/repo", LeaseTTL: time.Minute, Clock: clock})
	_, err = eng.Dispatch(ctx, engine.VoyageSpec{Title: "v", Missions: []engine.MissionSpec{
		{Key: "a", Title: "a", WriteArea: []string{"a/**"}},
		{Key: "b", Title: "b", WriteArea: []string{"b/**"}, DependsOn: []string{"a"}},
	}}, "test")
	require.NoError(t, err)
	_, err = eng.CreateMission(ctx, engine.MissionSpec{Title: "late", Deadline: now().Add(time.Second), WriteArea: []string{"c/**"}}, "test")
	require.NoError(t, err)
	_, err = eng.CreateMission(ctx, engine.MissionSpec{Title: "leased", WriteArea: []string{"d/**"}}, "test")
	require.NoError(t, err)
	_, err = eng.Acquire(ctx, engine.AcquireRequest{AgentID: "ghost"})
	require.NoError(t, err)
	rawExec(t, s, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO missions (id, title, brief, repository, state, landing, attempt, created_at, updated_at)
 VALUES ('m_landing', 'l', 'l', '/repo', 'completed', 'waiting', 1, 0, 0)`)
		return err
	})

	wt, err := worktree.NewManager(worktree.Config{DataDir: dir})
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	run, err := runner.New(runner.Config{Self: self, DataDir: dir})
	require.NoError(t, err)
	sch, err := scheduler.New(eng, wt, run, scheduler.Config{DataDir: dir, CleanupEvery: -1, Now: now})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, sch.Stop(ctx))
		require.NoError(t, run.Close())
		require.NoError(t, wt.Close())
	})
	for i := 0; i < 3; i++ {
		_, err := sch.RunOnce(ctx)
		require.NoError(t, err)
		clock.add(2 * time.Minute) // past the deadline and the lease
	}

	mu.Lock()
	var qs []string
	for q := range ran {
		qs = append(qs, q)
	}
	mu.Unlock()
	sort.Strings(qs)
	require.Greater(t, len(qs), 15, "the ticks ran the statements of every step")
	for _, q := range qs {
		if strings.HasPrefix(q, "SAVEPOINT") || strings.HasPrefix(q, "RELEASE") || strings.HasPrefix(q, "ROLLBACK") {
			continue
		}
		require.Empty(t, fullScans(t, s, q, ran[q]...), "a per-tick statement walks the history:\n%s", q)
		require.Empty(t, listIndexUses(t, s, q, ran[q]...), "a per-tick statement walks a list index:\n%s", q)
	}
}

// rawExec runs fn in one transaction on a connection of its own to s's file (the store's
// writer pool is its writer's), for fixtures written in bulk.
func rawExec(t *testing.T, s *Store, fn func(tx *sql.Tx) error) {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(s.path, Options{}.withDefaults(), true))
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	tx, err := db.Begin()
	require.NoError(t, err)
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
}

// HoldCounts (doctor, status) walks the holds and finds each mission by its key, whatever
// the history holds.
func TestHoldCountsPlan_WalksTheHoldsNotTheHistory(t *testing.T) {
	s := openSeeded(t, 0)
	plan := strings.Join(queryPlan(t, s, sqlHoldCounts), "\n")
	require.Regexp(t, `SCAN h\b`, plan)
	require.Regexp(t, `SEARCH m (EXISTS )?USING (INDEX sqlite_autoindex_missions_1|PRIMARY KEY|INTEGER PRIMARY KEY) \(id=\?\)`, plan)
	require.NotContains(t, plan, "missions_state", "the plan walks the missions by state:\n%s", plan)
}
