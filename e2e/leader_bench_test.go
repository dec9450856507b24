package e2e_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// logTimes returns the timestamps of the log lines (tint: RFC 3339 first) that contain msg.
func logTimes(log, msg string) []time.Time {
	var out []time.Time
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, msg) {
			continue
		}
		ts, _, _ := strings.Cut(line, " ")
		if at, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			out = append(out, at)
		}
	}
	return out
}

// crashFigures are the times one leader crash cost.
type crashFigures struct {
	takeover      time.Duration // SIGKILL (or SIGTERM) of the leader → the next leader elected
	reattached    time.Duration // election → the last running agent re-attached
	firstDispatch time.Duration // election → the first mission dispatched by the new leader
}

// Ways the leader goes away in measureTakeover.
const (
	killFollowerTakes = "sigkill, a second process takes over"
	killRestart       = "sigkill, the same command restarted at once"
	termRestart       = "sigterm, the same command restarted at once"
)

// measureTakeover runs one leader crash with the default 5 s leader lease and 1 s tick: four
// agents running; the leader goes away (mode); a new mission arrives while none leads.
func measureTakeover(b *testing.B, mode string) crashFigures {
	e := newXEnv(b, xsettings{RefProfile: true, LeaderLease: 5 * time.Second, Tick: time.Second, LeaseTTL: 60 * time.Second,
		Renew: 20 * time.Second, MaxConcurrency: 5})
	a := e.daemon("daemon-a")
	e.waitUntil("a leads", func() bool { return leaderPID(e.leader().Owner) == a.pid() })
	var f *xproc
	if mode == killFollowerTakes {
		f = e.daemon("daemon-b")
	}
	spec := engine.VoyageSpec{Title: "takeover"}
	for i := range 4 {
		key := fmt.Sprintf("t%d", i)
		spec.Missions = append(spec.Missions, engine.MissionSpec{Key: key, Title: key, WriteArea: []string{key + ".txt"},
			Brief: fmt.Sprintf("@heartbeat 1s\n@sleep 12s\n@write %s.txt \"%s\\n\"\n@commit %s\n@done", key, key, key)})
	}
	_, err := e.engine().Dispatch(e.ctx, spec, "bench")
	require.NoError(b, err)
	e.waitUntil("four agents running", func() bool {
		n := 0
		for _, m := range e.missions() {
			if m.State == domain.StateRunning && len(e.attemptAgents(m.ID)) > 0 {
				n++
			}
		}
		return n == 4
	})
	killed := time.Now()
	if mode == termRestart {
		require.NoError(b, a.stop())
	} else {
		a.kill()
	}
	if mode != killFollowerTakes {
		f = e.daemon("daemon-restarted")
	}
	// Work that arrives while no process leads.
	_, err = e.engine().CreateMission(e.ctx, engine.MissionSpec{Title: "waiting", WriteArea: []string{"w.txt"},
		Brief: "@write w.txt \"w\\n\"\n@commit w\n@done"}, "bench")
	require.NoError(b, err)
	e.waitUntil("b leads", func() bool { return leaderPID(e.leader().Owner) == f.pid() })
	var elected, dispatched time.Time
	e.waitUntil("b re-attached four agents and dispatched", func() bool {
		elected, dispatched = time.Time{}, time.Time{}
		for _, ev := range e.events() {
			var d struct{ Owner string }
			_ = json.Unmarshal(ev.Data, &d)
			if ev.Type == "leader.elected" && leaderPID(d.Owner) == f.pid() {
				elected = ev.At
			}
			if ev.Type == "lease.acquired" && !elected.IsZero() && dispatched.IsZero() {
				dispatched = ev.At
			}
		}
		return !dispatched.IsZero() && len(logTimes(f.logText(), "re-attached agent")) == 4
	})
	re := logTimes(f.logText(), "re-attached agent")
	last := slices.MaxFunc(re, func(x, y time.Time) int { return x.Compare(y) })
	figs := crashFigures{takeover: elected.Sub(killed), reattached: last.Sub(elected), firstDispatch: dispatched.Sub(elected)}
	require.NoError(b, f.stop())
	e.cleanup() // the agents still sleeping must not weigh on the next iteration
	return figs
}

// BenchmarkLeaderTakeover reports what a leader crash costs with the default leader lease
// (5 s) and tick (1 s): how long until the other process of the data dir leads, then until it
// has re-attached the four running agents and dispatched the mission that arrived meanwhile. Each
// iteration is a fresh sandbox; run with -benchtime Nx.
//
//	go test -run '^$' -bench LeaderTakeover -benchtime 5x ./e2e/
func BenchmarkLeaderTakeover(b *testing.B) { benchCrash(b, killFollowerTakes) }

// BenchmarkRestartRecovery reports the same for a data dir served by one process that is
// restarted at once (as a service manager or an MCP client restarts a server): after SIGKILL
// the new process must wait out the dead one's leader lease; after SIGTERM the old one resigned.
//
//	go test -run '^$' -bench RestartRecovery -benchtime 5x ./e2e/
func BenchmarkRestartRecovery(b *testing.B) {
	b.Run("sigkill", func(b *testing.B) { benchCrash(b, killRestart) })
	b.Run("sigterm", func(b *testing.B) { benchCrash(b, termRestart) })
}

func benchCrash(b *testing.B, mode string) {
	var all []crashFigures
	for b.Loop() {
		all = append(all, measureTakeover(b, mode))
	}
	report := func(name string, get func(crashFigures) time.Duration) {
		ds := make([]time.Duration, len(all))
		for i, f := range all {
			ds[i] = get(f)
		}
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Milliseconds()), name+"_median_ms")
		b.ReportMetric(float64(ds[len(ds)-1].Milliseconds()), name+"_max_ms")
		b.Logf("%s: %v", name, ds)
	}
	report("takeover", func(f crashFigures) time.Duration { return f.takeover })
	report("reattach", func(f crashFigures) time.Duration { return f.reattached })
	report("first_dispatch", func(f crashFigures) time.Duration { return f.firstDispatch })
}
