package e2e_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// crashVoyage is the voyage the SIGKILL loop runs, long enough that every kill falls in it:
// four chains of four missions (hard dependencies), each agent heartbeating and sleeping 6 to
// 10 s so that it lives through several restarts; the second mission of chain b fails its
// first attempt (flaky, retried); a mission fails for good (no dependents); two missions append
// a line to the same file: when both start from the same base (they are the most urgent, so
// they usually do), the second to land conflicts and gets a repair mission; when a kill gave
// one of them back and it started again after the other landed, it appends to the landed line
// and lands cleanly. Either way the file ends with both lines.
func crashVoyage() (engine.VoyageSpec, []string) {
	v := engine.VoyageSpec{Title: "sigkill voyage"}
	var work []string
	for c, chain := range []string{"a", "b", "c", "d"} {
		for i := range 4 {
			key := fmt.Sprintf("%s%d", chain, i)
			sleep := 6000 + ((c*4+i)*2719)%4000
			brief := fmt.Sprintf("@heartbeat 200ms\n@sleep %dms\n@write f/%s.txt \"%s\\n\"\n@commit work %s\n@done %s", sleep, key, key, key, key)
			if key == "b1" {
				brief = "@flaky 1 test \"flaky once\"\n" + brief
			}
			s := engine.MissionSpec{Key: key, Title: "mission " + key, WriteArea: []string{"f/" + key + ".txt"}, Brief: brief}
			if i > 0 {
				s.DependsOn = []string{fmt.Sprintf("%s%d", chain, i-1)}
			}
			v.Missions = append(v.Missions, s)
			work = append(work, key)
		}
	}
	v.Missions = append(v.Missions,
		engine.MissionSpec{Key: "broken", Title: "broken", WriteArea: []string{"f/broken.txt"}, RetryBudget: ptrInt(0),
			Brief: "@heartbeat 200ms\n@sleep 600ms\n@fail test \"always broken\""},
		engine.MissionSpec{Key: "k1", Title: "conflict one", WriteArea: []string{"k1/**"}, Priority: 20,
			Brief: "@heartbeat 200ms\n@sleep 500ms\n@append shared.txt \"k1\\n\"\n@write k1/x.txt \"k1\\n\"\n@commit work k1\n@done"},
		engine.MissionSpec{Key: "k2", Title: "conflict two", WriteArea: []string{"k2/**"}, Priority: 20,
			Brief: "@heartbeat 200ms\n@sleep 1500ms\n@append shared.txt \"k2\\n\"\n@write k2/x.txt \"k2\\n\"\n@commit work k2\n@done"},
	)
	return v, append(work, "k1", "k2")
}

func ptrInt(n int) *int { return &n }

// outage is the time between a SIGKILL and the next leader's election.
type outage struct{ from, to time.Time }

// TestCrash_SIGKILLTwentyTimes (issue 6): the scheduler process (a daemon, or an HTTP server
// every other time) is killed with SIGKILL at 20 random moments of a voyage and started again
// each time. In the end every mission is terminal, none landed twice (git history and landing
// records), the event log replays to the tables, no agent process is left, and the agents
// that finished while no scheduler ran had their results kept: their attempt completed, no
// second agent was launched for them. The seed is logged; MCP_SCHEDULER_CRASH_SEED replays it.
func TestCrash_SIGKILLTwentyTimes(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("MCP_SCHEDULER_CRASH_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("seed %d (MCP_SCHEDULER_CRASH_SEED=%d replays the kill moments)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	const lease = time.Second
	e := newXEnv(t, xsettings{RefProfile: true, LeaderLease: lease, LeaseTTL: 10 * time.Second, MaxConcurrency: 4, RetryBudget: 3})
	spec, keys := crashVoyage()
	d, err := e.engine().Dispatch(e.ctx, spec, "test")
	require.NoError(t, err)

	startProc := func(i int) *xproc {
		if i%2 == 1 {
			return e.start(fmt.Sprintf("serve-%d", i), "serve", "--http", "127.0.0.1:0")
		}
		return e.daemon(fmt.Sprintf("daemon-%d", i))
	}
	var outages []outage
	var recoveries []time.Duration
	var openAtKill []int
	p := startProc(0)
	// The first process leads before its life is counted, like every restart: under load its
	// start alone can outlast a 0.1 – 1 s life (seen at load 36: killed before it ever led).
	first := p.pid()
	e.waitUntil("the first process leads", func() bool { return leaderPID(e.leader().Owner) == first })
	var window int
	for i := range 20 {
		if i%4 == 0 {
			window = e.progress()
		}
		if i%4 == 3 && e.progress() == window {
			// A leader that lives 0.1 – 1 s may never get as far as launching an agent on a
			// loaded machine, and twenty such lives leave the voyage where it was (seen at load
			// 40: 19 of 19 missions open at every kill, no agent ever ran). When three lives in
			// a row made no progress, the fourth first makes some — launches an agent or
			// finishes a mission — then lives its random while. On a machine that keeps up this
			// never waits, and every kill stays where chance puts it.
			e.waitUntil(fmt.Sprintf("leader %d makes progress", i), func() bool {
				return e.progress() > window || e.open() == 0
			})
		}
		time.Sleep(time.Duration(100+rng.IntN(900)) * time.Millisecond) // leading for a random while
		require.False(t, p.exited(), "%s exited by itself: %s", p.name, tailString(p.logText(), 3000))
		p.kill()
		killed := time.Now()
		openAtKill = append(openAtKill, e.open())
		// Down for a while (agents go on ending), then started again.
		time.Sleep(time.Duration(rng.IntN(800)) * time.Millisecond) // a random downtime
		p = startProc(i + 1)
		pid := p.pid()
		took := e.waitUntil(fmt.Sprintf("restart %d leads", i+1), func() bool { return leaderPID(e.leader().Owner) == pid })
		outages = append(outages, outage{from: killed, to: time.Now()})
		recoveries = append(recoveries, took)
	}
	t.Logf("restart to leading (the dead leader's 1 s lease runs out): %v", recoveries)
	t.Logf("missions not yet terminal at each kill: %v", openAtKill)
	for i, n := range openAtKill {
		require.Positive(t, n, "kill %d came after the voyage ended: the voyage is too short for the loop", i+1)
	}
	terminal := func() bool {
		for _, m := range e.missions() {
			if !m.State.Terminal() || (m.State == domain.StateCompleted && !m.Landing.Satisfies() && m.Landing != domain.LandingRepair) {
				return false
			}
		}
		return true
	}
	e.waitUntil("every mission terminal and landed", terminal)
	require.Empty(t, e.leftovers(), "no agent process left behind")
	require.NoError(t, p.stop())
	e.waitNoStrays()

	// Nothing landed twice: one commit per mission on main, at most one landing per mission.
	subjects := e.commitSubjects()
	for _, key := range keys {
		m := e.mission(d.IDs[key])
		require.Equal(t, domain.StateCompleted, m.Mission.State, "%s: %s", key, e.dump())
		require.Equal(t, 1, subjects["work "+key], "%s landed exactly once", key)
		landed := 0
		for _, l := range m.Landings {
			if l.Status == "landed" {
				landed++
			}
		}
		require.LessOrEqual(t, landed, 1, "%s has %d landings", key, landed)
	}
	for _, key := range keys[:16] {
		body, ok := e.file("f/" + key + ".txt")
		require.True(t, ok, key)
		require.Equal(t, key+"\n", body)
	}
	shared, _ := e.file("shared.txt")
	require.Contains(t, shared, "k1")
	require.Contains(t, shared, "k2")
	broken := e.mission(d.IDs["broken"]).Mission
	require.Equal(t, domain.StateFailed, broken.State)
	require.Zero(t, subjects["work broken"])
	repairs, err := e.engine().ListMissions(e.ctx, engine.MissionFilter{Kind: domain.KindRepair, Limit: 100})
	require.NoError(t, err)
	if e.diverged("work k1", "work k2") {
		require.NotEmpty(t, repairs, "k1 and k2 started from the same base: the conflict was repaired")
	} else {
		t.Logf("k1 and k2 ran one after the other (a kill gave one back before launch): no conflict to repair")
	}

	// Every attempt was leased once, every managed acquire by the leader of that moment; the
	// event log replays to the tables; git's object database is sound.
	_, elections := leadershipHistory(t, e.events(), "ref")
	require.GreaterOrEqual(t, len(elections), 21)
	diffs, err := e.engine().VerifyReplay(e.ctx)
	require.NoError(t, err)
	require.Empty(t, diffs)
	e.git("fsck", "--no-progress")
	// The person's checkout of main was fast-forwarded by landings cut short by SIGKILLs: it is
	// clean, at main, with no lock left behind.
	require.Empty(t, e.git("status", "--porcelain"), "the person's checkout is clean")
	require.Equal(t, e.git("rev-parse", "main"), e.git("rev-parse", "HEAD"))
	require.NoFileExists(t, filepath.Join(e.repo, ".git", "index.lock"))

	// One agent per work mission (two for the flaky one), and the results of agents that
	// ended during an outage were kept.
	launched := e.launchedAttempts()
	keptDuringOutage := 0
	for _, key := range keys {
		id := d.IDs[key]
		det := e.mission(id)
		require.Equal(t, agentsWanted(key, det.Attempts), launched[id], "%s: agents launched: %s", key, jsonOf(det.Attempts))
		for _, ex := range e.exitTimes(id) {
			for _, o := range outages {
				if ex.at.After(o.from) && ex.at.Before(o.to) && ex.attempt == det.Mission.Attempt {
					keptDuringOutage++
					require.Equal(t, domain.StateCompleted, det.Mission.State, "%s ended during an outage", key)
					// Kept: that attempt is the completed one, and every other attempt of a
					// non-flaky mission was given back before its agent was launched (a crash
					// between acquire and launch), never run again.
					for _, at := range det.Attempts {
						switch {
						case at.Attempt == ex.attempt:
							require.Equal(t, domain.OutcomeCompleted, at.Outcome, "%s: the result of the agent that ended during an outage was kept", key)
						case key != "b1":
							require.Equal(t, domain.OutcomeReleased, at.Outcome, "%s attempt %d: %s", key, at.Attempt, jsonOf(det.Attempts))
						}
					}
				}
			}
		}
	}
	t.Logf("%d agents ended while no scheduler ran; their results were kept", keptDuringOutage)
	require.Positive(t, keptDuringOutage, "some agent ended during an outage (otherwise the test proved nothing about it)")
}

// agentsWanted is how many agents the SIGKILL loop may launch for a work mission: one, and
// for b1 (flaky while its attempt number is 1) a second one when its attempt 1 was launched
// and failed. A kill between acquire and launch gives attempt 1 back unlaunched; then attempt
// 2 is b1's first agent, which is not flaky, and one agent is all it gets.
func agentsWanted(key string, attempts []domain.Attempt) int {
	if key != "b1" {
		return 1
	}
	for _, at := range attempts {
		if at.Attempt == 1 && at.Outcome != "released" {
			return 2
		}
	}
	return 1
}

// diverged reports whether the commits with subjects a and b on main are on separate lines of
// history (neither an ancestor of the other): the two missions worked from the same base.
func (e *xenv) diverged(a, b string) bool {
	e.t.Helper()
	ca := e.git("log", "--format=%H", "--fixed-strings", "--grep", a, "main")
	cb := e.git("log", "--format=%H", "--fixed-strings", "--grep", b, "main")
	require.Len(e.t, strings.Fields(ca), 1, a)
	require.Len(e.t, strings.Fields(cb), 1, b)
	return !e.ancestor(ca, cb) && !e.ancestor(cb, ca)
}

// ancestor reports whether commit a is an ancestor of commit b.
func (e *xenv) ancestor(a, b string) bool {
	cmd := exec.Command("git", "-C", e.repo, "merge-base", "--is-ancestor", a, b)
	cmd.Env = e.env
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return false
	}
	require.NoError(e.t, err, "git merge-base --is-ancestor %s %s", a, b)
	return true
}

// progress counts what a leader's work leaves behind: agents launched (their pid.json) and
// missions that reached a terminal state.
func (e *xenv) progress() int {
	n := len(e.agentRecords())
	for _, m := range e.missions() {
		if m.State.Terminal() {
			n++
		}
	}
	return n
}

// open counts the missions that are not terminal.
func (e *xenv) open() int {
	n := 0
	for _, m := range e.missions() {
		if !m.State.Terminal() {
			n++
		}
	}
	return n
}

type exitAt struct {
	attempt int
	at      time.Time
}

// exitTimes reads when each attempt's agent of a mission ended (exit.json).
func (e *xenv) exitTimes(missionID string) []exitAt {
	var out []exitAt
	files, _ := filepath.Glob(filepath.Join(e.data, "attempts", missionID, "a*", runner.FileExit))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var rec runner.ExitRecord
		if json.Unmarshal(b, &rec) != nil {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "a"))
		out = append(out, exitAt{attempt: n, at: rec.ExitedAt})
	}
	return out
}
