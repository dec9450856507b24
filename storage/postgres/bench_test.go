package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
)

// Helpers of the PostgreSQL benchmarks (docs/benchmarks.md, "PostgreSQL"): nodes on one
// database, the seeded queue, and the CPU both this process and the server spend. None
// asserts a speed.

// benchT0 is the creation time of the seeded missions; the engines' fake clock stands an hour
// later.
var benchT0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// benchNode is one scheduler node: its own Store (own pool, own LISTEN connection when
// watched) and its own Engine, on the database every node shares.
type benchNode struct {
	st *postgres.Store
	e  *engine.Engine
}

// openBenchNodes opens n nodes on url; clock nil is the system clock. Closed when tb ends.
func openBenchNodes(tb testing.TB, url string, n int, clock engine.Clock) []benchNode {
	tb.Helper()
	out := make([]benchNode, n)
	for i := range out {
		st, err := postgres.Open(context.Background(), url, postgres.Options{})
		require.NoError(tb, err)
		tb.Cleanup(func() { require.NoError(tb, st.Close()) })
		out[i] = benchNode{st: st, e: engine.New(st, engine.Options{Clock: clock, DefaultRepository: "/repo"})}
	}
	return out
}

// seedBenchMissions inserts n pending missions through the store seam, 500 to a transaction,
// each in its own repository with its own write area (so that the engine's runnable rules
// look at few live missions per repository, as on a running scheduler), as the SQLite
// benchmark seeds them.
func seedBenchMissions(tb testing.TB, st engine.Store, n int) {
	tb.Helper()
	ctx := context.Background()
	for start := 0; start < n; start += 500 {
		require.NoError(tb, st.Update(ctx, func(tx engine.Tx) error {
			for i := start; i < min(n, start+500); i++ {
				if err := tx.MissionInsert(ctx, benchMission(i)); err != nil {
					return err
				}
			}
			return nil
		}))
	}
}

// benchMission is the i-th seeded mission: pending, repository /repo/i, write area wi/**.
func benchMission(i int) *domain.Mission {
	id := fmt.Sprintf("msn_%026d", i)
	return &domain.Mission{ID: id, Title: "bench", Brief: "bench", Repository: fmt.Sprintf("/repo/%d", i),
		Priority: 100, Kind: domain.KindWork, Review: "none", State: domain.StatePending, Landing: domain.LandingNone,
		WriteArea: []string{fmt.Sprintf("w%d/**", i)}, CreatedAt: benchT0, UpdatedAt: benchT0}
}

// countRows runs a count query on url and returns its answer.
func countRows(tb testing.TB, url, query string, args ...any) int64 {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(tb, err)
	defer conn.Close(ctx)
	var n int64
	require.NoError(tb, conn.QueryRow(ctx, query, args...).Scan(&n), query)
	return n
}

// processCPU is the CPU time (user + system) this process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU samples the CPU the PostgreSQL server spends: the user + system time of every
// server process pg_stat_activity lists (backends of every database, and the background
// processes), read from /proc. A backend that ends between two samples is missed; the
// benchmarks keep their pools open across the timed part, so theirs are counted.
type serverCPU struct {
	url   string
	ticks map[int]int64 // pid → clock ticks at the first sample
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's times (100 on Linux).
const clockTicks = 100

// startServerCPU takes the first sample; it fails tb when no server process can be read in
// /proc (a server on another host).
func startServerCPU(tb testing.TB, url string) *serverCPU {
	tb.Helper()
	s := &serverCPU{url: url}
	s.ticks = s.sample(tb)
	return s
}

// since returns the server CPU spent since the first sample, counting processes that started
// since from zero.
func (s *serverCPU) since(tb testing.TB) time.Duration {
	var total int64
	for pid, t := range s.sample(tb) {
		total += t - s.ticks[pid]
	}
	return time.Duration(total) * time.Second / clockTicks
}

func (s *serverCPU) sample(tb testing.TB) map[int]int64 {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.url)
	require.NoError(tb, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT pid FROM pg_stat_activity")
	require.NoError(tb, err)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(tb, err)
	out := make(map[int]int64, len(pids))
	for _, pid := range pids {
		if t, err := procTicks(int(pid)); err == nil {
			out[int(pid)] = t
		}
	}
	require.NotEmpty(tb, out, "serverCPU: no server process readable in /proc (the server must run on this host)")
	return out
}

// procTicks reads utime + stime of pid from /proc/<pid>/stat, in clock ticks.
func procTicks(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // fields[0] is field 3, state
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command", pid, len(fields))
	}
	utime, err := strconv.ParseInt(fields[11], 10, 64)
	if err != nil {
		return 0, err
	}
	stime, err := strconv.ParseInt(fields[12], 10, 64)
	return utime + stime, err
}

// loadAvg is the 1-minute load average, printed beside every figure.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		return -1
	}
	return f
}
