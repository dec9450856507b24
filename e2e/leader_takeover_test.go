package e2e_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// leaderPID returns the pid in a leader owner ("host:pid:random"), 0 when none leads.
func leaderPID(owner string) int {
	parts := strings.Split(owner, ":")
	if len(parts) < 3 {
		return 0
	}
	pid, _ := strconv.Atoi(parts[len(parts)-2])
	return pid
}

// workVoyage is n reference-agent missions, each writing f/<key>.txt and committing it with
// the subject "work <key>", sleeping between sleepMin and sleepMin+spread (by index), with a
// hard dependency of every third mission on the one before it.
func workVoyage(n int, sleepMin, spread time.Duration) engine.VoyageSpec {
	v := engine.VoyageSpec{Title: "crash voyage"}
	for i := range n {
		key := fmt.Sprintf("m%02d", i)
		sleep := sleepMin + time.Duration(i*7%5)*spread/4
		s := engine.MissionSpec{Key: key, Title: "mission " + key, WriteArea: []string{"f/" + key + ".txt"},
			Brief: fmt.Sprintf("@heartbeat 200ms\n@sleep %dms\n@write f/%s.txt \"%s\\n\"\n@commit work %s\n@done %s",
				sleep.Milliseconds(), key, key, key, key)}
		if i%3 == 2 {
			s.DependsOn = []string{fmt.Sprintf("m%02d", i-1)}
		}
		v.Missions = append(v.Missions, s)
	}
	return v
}

// acquireRecord is what a lease.acquired event says about who took a mission.
type acquireRecord struct {
	Seq         int64
	MissionID   string
	Attempt     int
	Epoch       int64
	Profile     string
	Leader      string
	LeaderEpoch int64
}

// leadershipHistory checks the event log: every lease.acquired event of a managed profile
// names the leader that held the lease at that moment (the latest leader.elected before it),
// and no (mission, attempt) nor epoch is acquired twice. It returns the acquires and the
// elections in order.
func leadershipHistory(t *testing.T, evs []domain.Event, profile string) ([]acquireRecord, []domain.Event) {
	t.Helper()
	var acquires []acquireRecord
	var elections []domain.Event
	var current struct {
		Owner string `json:"owner"`
		Epoch int64  `json:"epoch"`
	}
	seenAttempt := map[string]bool{}
	seenEpoch := map[string]bool{}
	for _, ev := range evs {
		switch ev.Type {
		case "leader.elected":
			require.NoError(t, json.Unmarshal(ev.Data, &current))
			elections = append(elections, ev)
		case "lease.acquired":
			var d struct {
				Profile     string `json:"profile"`
				Leader      string `json:"leader"`
				LeaderEpoch int64  `json:"leader_epoch"`
			}
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			a := acquireRecord{Seq: ev.Seq, MissionID: ev.MissionID, Attempt: ev.Attempt, Epoch: ev.Epoch,
				Profile: d.Profile, Leader: d.Leader, LeaderEpoch: d.LeaderEpoch}
			k := fmt.Sprintf("%s/%d", ev.MissionID, ev.Attempt)
			require.False(t, seenAttempt[k], "attempt %s leased twice", k)
			seenAttempt[k] = true
			ek := fmt.Sprintf("%s/%d", ev.MissionID, ev.Epoch)
			require.False(t, seenEpoch[ek], "epoch %s handed out twice", ek)
			seenEpoch[ek] = true
			if d.Profile == profile {
				require.NotEmpty(t, current.Owner, "acquire %d before any leader was elected", ev.Seq)
				require.Equal(t, current.Owner, d.Leader, "acquire %d of %s by a process that was not the leader", ev.Seq, ev.MissionID)
				require.Equal(t, current.Epoch, d.LeaderEpoch, "acquire %d of %s under a stale leader epoch", ev.Seq, ev.MissionID)
			}
			acquires = append(acquires, a)
		}
	}
	return acquires, elections
}

// launchedAttempts counts, per mission, the attempts whose agent was launched (pid.json).
func (e *xenv) launchedAttempts() map[string]int {
	out := map[string]int{}
	for dir := range e.agentRecords() {
		// <data>/attempts/<mission>/a<n>
		parts := strings.Split(dir, "/")
		out[parts[len(parts)-2]]++
	}
	return out
}

// checkLandedOnce checks that every work mission of the voyage completed, landed, and that
// main holds its commit exactly once with its file.
func (e *xenv) checkLandedOnce(t *testing.T, d engine.Dispatched, keys []string) {
	t.Helper()
	subjects := e.commitSubjects()
	for _, key := range keys {
		id := d.IDs[key]
		m := e.mission(id).Mission
		require.Equal(t, domain.StateCompleted, m.State, "%s (%s)", key, id)
		require.Equal(t, domain.LandingLanded, m.Landing, "%s (%s)", key, id)
		require.Equal(t, 1, subjects["work "+key], "the commit of %s is on main exactly once", key)
		body, ok := e.file("f/" + key + ".txt")
		require.True(t, ok, key)
		require.Equal(t, key+"\n", body)
	}
}

// TestLeader_TwoProcessesOneDispatchesAndTakeover: a daemon and an HTTP server share one data
// dir and one repository. Only the leader dispatches (every acquire of the managed profile
// names the leader of that moment, from the event log); SIGKILL of the leader in the middle of
// the voyage hands the loop to the other process within the leader lease, which re-attaches
// the running agents; no mission is launched twice and every mission's work lands once.
func TestLeader_TwoProcessesOneDispatchesAndTakeover(t *testing.T) {
	const lease = 5 * time.Second // the default leader lease
	e := newXEnv(t, xsettings{RefProfile: true, LeaderLease: lease, LeaseTTL: 10 * time.Second, MaxConcurrency: 3})
	a := e.daemon("daemon")
	e.waitUntil("the daemon leads", func() bool { return leaderPID(e.leader().Owner) == a.pid() })
	b := e.start("serve-http", "serve", "--http", "127.0.0.1:0")
	e.waitUntil("serve listens", func() bool { return strings.Contains(b.logText(), "serving MCP over HTTP") })

	spec := workVoyage(9, 1500*time.Millisecond, 2*time.Second)
	d, err := e.engine().Dispatch(e.ctx, spec, "test")
	require.NoError(t, err)
	var keys []string
	for _, m := range spec.Missions {
		keys = append(keys, m.Key)
	}

	// Kill the leader while agents run and some work already landed.
	var running []string
	e.waitUntil("agents running after a first landing", func() bool {
		running = running[:0]
		landed := 0
		for _, m := range e.missions() {
			if m.State == domain.StateRunning {
				running = append(running, m.ID)
			}
			if m.Landing == domain.LandingLanded {
				landed++
			}
		}
		return landed >= 1 && len(running) >= 2
	})
	old := e.leader()
	require.Equal(t, a.pid(), leaderPID(old.Owner), "the daemon still leads")
	require.False(t, b.exited())
	a.kill()
	took := e.waitUntil("the HTTP server takes over", func() bool { return leaderPID(e.leader().Owner) == b.pid() })
	t.Logf("takeover %v after SIGKILL of the leader (leader lease %v)", took.Round(time.Millisecond), lease)
	require.Less(t, took, 2*lease, "taken over within the leader lease (plus a renewal and a tick)")

	e.waitUntil("the voyage completes", func() bool { return e.voyage(d.Voyage.ID).Voyage.State == domain.VoyageCompleted })
	e.checkLandedOnce(t, d, keys)

	// No mission dispatched twice: one launched agent per mission, the running ones re-attached.
	for key, n := range e.launchedAttempts() {
		require.Equal(t, 1, n, "mission %s launched %d agents", key, n)
	}
	for _, id := range running {
		require.Equal(t, 1, e.mission(id).Mission.Attempt, "running mission %s re-attached, not re-run", id)
		require.Contains(t, b.logText(), "mission_id="+id, "the new leader took over %s", id)
	}
	require.Contains(t, b.logText(), "re-attached agent")

	acquires, elections := leadershipHistory(t, e.events(), "ref")
	require.Len(t, elections, 2, "the daemon, then the HTTP server")
	byOwner := map[int]int{}
	for _, ac := range acquires {
		byOwner[leaderPID(ac.Leader)]++
	}
	require.Positive(t, byOwner[a.pid()], "the daemon dispatched before it died")
	require.Positive(t, byOwner[b.pid()], "the HTTP server dispatched after it took over")
	require.Equal(t, len(acquires), byOwner[a.pid()]+byOwner[b.pid()])
	require.Empty(t, e.leftovers(), "no agent process outlives the voyage")
	require.NoError(t, b.stop())
	e.waitNoStrays()
}

// TestLeader_LongTickKeepsLeadership: a landing whose repository check runs longer than the
// leader lease does not cost the leader its lease (it is renewed while the tick works), so the
// second process never takes over a live leader: one election for the whole voyage.
func TestLeader_LongTickKeepsLeadership(t *testing.T) {
	const lease = 3 * time.Second
	e := newXEnv(t, xsettings{RefProfile: true, LeaderLease: lease, RepoExtra: `checks = [["sleep", "4"]]`})
	a := e.daemon("daemon-a")
	e.waitUntil("a leads", func() bool { return leaderPID(e.leader().Owner) == a.pid() })
	b := e.daemon("daemon-b")
	spec := workVoyage(3, 100*time.Millisecond, 0)
	d, err := e.engine().Dispatch(e.ctx, spec, "test")
	require.NoError(t, err)
	e.waitUntil("the voyage completes", func() bool { return e.voyage(d.Voyage.ID).Voyage.State == domain.VoyageCompleted })
	e.checkLandedOnce(t, d, []string{"m00", "m01", "m02"})
	_, elections := leadershipHistory(t, e.events(), "ref")
	require.Len(t, elections, 1, "the leader kept its lease through 4 s checks: %s", jsonOf(elections))
	require.NoError(t, a.stop())
	require.NoError(t, b.stop())
}

// TestLeader_SIGTERMHandsOverAtOnce: a leader stopped with SIGTERM (as a service manager or
// Claude Code stops a server) exits promptly even while a landing runs the repository's
// 12 s check, resigns (leader.resigned) instead of letting its lease run out, and the other
// process leads within a tick or two, re-attaches the running agents and finishes the voyage:
// each mission once, the interrupted landing done again from scratch, never half-recorded.
func TestLeader_SIGTERMHandsOverAtOnce(t *testing.T) {
	const lease = 5 * time.Second
	e := newXEnv(t, xsettings{RefProfile: true, LeaderLease: lease, RepoExtra: `checks = [["sleep", "12"]]`})
	a := e.daemon("daemon-a")
	e.waitUntil("a leads", func() bool { return leaderPID(e.leader().Owner) == a.pid() })
	b := e.daemon("daemon-b")
	spec := engine.VoyageSpec{Title: "handover", Missions: []engine.MissionSpec{
		{Key: "quick", Title: "quick", WriteArea: []string{"f/quick.txt"}, Brief: "@write f/quick.txt \"quick\\n\"\n@commit work quick\n@done"},
		{Key: "slow", Title: "slow", WriteArea: []string{"f/slow.txt"},
			Brief: "@heartbeat 200ms\n@sleep 6s\n@write f/slow.txt \"slow\\n\"\n@commit work slow\n@done"},
	}}
	d, err := e.engine().Dispatch(e.ctx, spec, "test")
	require.NoError(t, err)
	e.waitUntil("quick's landing runs its check while slow runs", func() bool {
		return strings.Contains(a.logText(), "check-") && e.mission(d.IDs["slow"]).Mission.State == domain.StateRunning
	})
	start := time.Now()
	require.NoError(t, a.stop(), "SIGTERM ends the leader promptly")
	exited := time.Since(start)
	took := e.waitUntil("b leads", func() bool { return leaderPID(e.leader().Owner) == b.pid() })
	t.Logf("SIGTERM → exit %v; → the other process leads %v later (leader lease %v)", exited.Round(time.Millisecond),
		took.Round(time.Millisecond), lease)
	require.Less(t, exited, 6*time.Second, "not held up by the 12 s check")
	require.Less(t, took, lease, "handed over, not waited out")
	e.waitUntil("the voyage completes", func() bool { return e.voyage(d.Voyage.ID).Voyage.State == domain.VoyageCompleted })
	e.checkLandedOnce(t, d, []string{"quick", "slow"})
	require.Equal(t, 1, e.mission(d.IDs["slow"]).Mission.Attempt, "slow was re-attached, not run again")
	var resigned int
	for _, ev := range e.events() {
		if ev.Type == "leader.resigned" {
			resigned++
		}
		require.NotEqual(t, "landing.checks_failed", ev.Type, "the interrupted check is not a failed check")
	}
	require.Equal(t, 1, resigned)
	require.Empty(t, e.leftovers())
	require.NoError(t, b.stop())
}

// TestLeader_PausedLeaderLeavesAdoptedAgentsAlone: the leader is frozen (SIGSTOP) for longer
// than both the leader lease and the agents' lease; the other process takes over and
// re-attaches the running agent. When the old leader thaws, its own view of the agent's lease
// has long run out — it must find out the lease was renewed by the new leader and step back,
// not stop the agent the new leader now supervises: the mission completes from attempt 1.
func TestLeader_PausedLeaderLeavesAdoptedAgentsAlone(t *testing.T) {
	e := newXEnv(t, xsettings{RefProfile: true, LeaderLease: 2 * time.Second, LeaseTTL: 4 * time.Second, Renew: time.Second})
	a := e.daemon("daemon-a")
	e.waitUntil("a leads", func() bool { return leaderPID(e.leader().Owner) == a.pid() })
	b := e.daemon("daemon-b")
	m, err := e.engine().CreateMission(e.ctx, engine.MissionSpec{Title: "long", WriteArea: []string{"f/long.txt"},
		Brief: "@heartbeat 500ms\n@sleep 14s\n@write f/long.txt \"long\\n\"\n@commit work long\n@done"}, "test")
	require.NoError(t, err)
	id := m.Mission.ID
	e.waitUntil("the agent runs under a", func() bool { return len(e.attemptAgents(id)) > 0 })
	// a recorded the run (what b re-attaches from) and renewed the agent's lease once.
	first := e.mission(id).Mission.Lease.ExpiresAt
	e.waitUntil("a to record the run and renew the agent's lease", func() bool {
		m := e.mission(id).Mission
		return m.State == domain.StateRunning && strings.Contains(string(m.Run), `"pid"`) && m.Lease.ExpiresAt.After(first)
	})
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGSTOP))
	frozen := e.mission(id).Mission.Lease.ExpiresAt // a's last renewal: its own view of the lease
	e.waitUntil("b takes over", func() bool { return leaderPID(e.leader().Owner) == b.pid() })
	e.waitUntil("b re-attaches the agent", func() bool { return strings.Contains(b.logText(), "re-attached agent") })
	e.waitUntil("a's last known expiry of the agent's lease to pass", func() bool { return time.Now().After(frozen.Add(time.Second)) })
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGCONT))
	e.waitUntil("a steps back", func() bool { return strings.Contains(a.logText(), "leadership lost") })
	e.waitUntil("the mission lands", func() bool { return e.mission(id).Mission.Landing == domain.LandingLanded })
	d := e.mission(id)
	require.Equal(t, 1, d.Mission.Attempt, "the agent was not stopped by the thawed old leader: %s", jsonOf(d.Attempts))
	require.Len(t, d.Attempts, 1)
	require.Equal(t, domain.OutcomeCompleted, d.Attempts[0].Outcome)
	require.NotContains(t, a.logText(), "stopping the agent before anyone else may take the mission")
	require.NoError(t, a.stop())
	require.NoError(t, b.stop())
}
