package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// capProfile is a profile of the reference agent offering one capability, so that a mission
// needing it runs on the node that has the profile.
func capProfile(capability string) string {
	return `[[profiles]]
name = "ref-` + capability + `"
runtime = "ndjson"
command = ["{mcp_scheduler}", "reference-agent"]
env = ["PATH", "HOME"]
capabilities = ["` + capability + `"]
`
}

// Two daemons on one PostgreSQL database land onto one target branch of one git remote: na's
// landing of mission A blocks in the repository's check (until the test lets it go) while it
// holds the target's landing lock; nb's mission B onto the same target completes meanwhile
// and does not land: get_mission's why_not_running says landing_target_busy naming na, and the
// remote's main does not move. Let go, A lands, na releases the lock and B lands onto A's
// result, each with one landing record (no redo). Then a lock of a node that died (taken for
// "ngone", renewed until mission C waits for it, then no more) holds C until it expires, and
// nb takes it over and lands C.
func TestCluster_LandingsOnOneTargetAreSerializedByTheLandingLock(t *testing.T) {
	s := newSandbox(t)
	url := pgtest.Database(t)
	s.env = append(s.env, EnvDatabaseURL+"="+url)
	ctx := context.Background()
	bare := filepath.Join(t.TempDir(), "shop.git")
	out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).CombinedOutput()
	require.NoError(t, err, "%s", out)
	gitOut(t, s, "push", "-q", bare, "main:main")
	runs := t.TempDir() // each run of the check leaves a file here
	gate := filepath.Join(t.TempDir(), "go")
	repos := "[[repositories]]\nremote = \"" + bare + "\"\ntarget_branch = \"main\"\n" +
		`checks = [["sh", "-c", "mktemp -p '` + runs + `' >/dev/null; while [ ! -e '` + gate + `' ]; do sleep 0.1; done"]]` + "\n"
	checkRuns := func() int {
		es, err := os.ReadDir(runs)
		require.NoError(t, err)
		return len(es)
	}

	st, err := postgres.Open(ctx, url, postgres.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	eng := engine.New(st, engine.Options{DefaultRepository: "shop", ResolveRepository: func(p string) (string, error) { return p, nil }})
	// nb starts first and leads, so that the holds (recorded by the leader) come from the plan
	// of the node that waits: its wait names na's landing lock.
	nodes := map[string]*clusterNode{"nb": startNode(t, s, nodeSpec{url: url, name: "nb", extra: repos + capProfile("b")})}
	testenv.WaitFor(t, "nb to lead", func() bool {
		out, _, _ := s.cli("status")
		return strings.Contains(out, "nb (leader)")
	})
	nodes["na"] = startNode(t, s, nodeSpec{url: url, name: "na", extra: repos + capProfile("a")})
	t.Cleanup(func() { requireNoAgentsLeft(t, nodes) })
	t.Cleanup(func() {
		for _, n := range nodes {
			if n.p.cmd.ProcessState == nil {
				_ = n.p.cmd.Process.Signal(os.Interrupt)
				n.p.wait()
			}
		}
		if t.Failed() {
			dumpCluster(t, eng, nodes)
		}
	})
	create := func(title, capability, file string) string {
		c, err := eng.CreateMission(ctx, engine.MissionSpec{Title: title, Repository: "shop", TargetBranch: "main",
			Capabilities: []string{capability}, WriteArea: []string{file},
			Brief: "@write " + file + " " + title + "\n@commit " + file + "\n@done ok"}, "test")
		require.NoError(t, err)
		return c.Mission.ID
	}
	target := engine.LandingTarget("shop", "main")
	locks := func() []engine.LandingLock {
		ls, err := eng.LandingLocks(ctx)
		require.NoError(t, err)
		return ls
	}
	lockedBy := func(node string) bool {
		ls := locks()
		return len(ls) == 1 && ls[0].Target == target && ls[0].Node == node
	}
	waitsFor := func(id, node string) bool {
		d, err := eng.GetMission(ctx, id)
		require.NoError(t, err)
		for _, r := range d.WhyNotRunning {
			if r.Code == domain.LandWaitTargetBusy && strings.Contains(r.Message, "node "+node+" is landing onto main of shop: this one is taken when that node") {
				return d.Mission.State == domain.StateCompleted && !d.Mission.Landing.Satisfies()
			}
		}
		return false
	}
	mainBefore, err := bareGit(t, bare, "rev-parse", "main")
	require.NoError(t, err, mainBefore)

	a := create("from-na", "a", "a.txt")
	testenv.WaitFor(t, "A's check to run on na", func() bool { return checkRuns() == 1 })
	require.True(t, lockedBy("na"), "na holds the landing lock of shop's main while it lands A")
	b := create("from-nb", "b", "b.txt")
	testenv.WaitFor(t, "B to complete on nb and wait for na's landing", func() bool { return waitsFor(b, "na") })
	require.Equal(t, "nb", mission(t, eng, b).Node)
	require.True(t, lockedBy("na"), "na still lands")
	require.Equal(t, 1, checkRuns(), "nb did not start landing B: only A's check ran")
	now, err := bareGit(t, bare, "rev-parse", "main")
	require.NoError(t, err, now)
	require.Equal(t, mainBefore, now, "nothing landed while the check holds A")

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	testenv.WaitFor(t, "A and then B to land", func() bool {
		return mission(t, eng, a).Landing == domain.LandingLanded && mission(t, eng, b).Landing == domain.LandingLanded
	})
	la, lb := onlyLanding(t, eng, a), onlyLanding(t, eng, b)
	require.Equal(t, mainBefore, la.OldTarget, "A landed onto main as it was")
	require.Equal(t, la.NewTarget, lb.OldTarget, "B landed onto A's result, after it")
	testenv.WaitFor(t, "the landing locks to be released", func() bool { return len(locks()) == 0 })

	// A node that died while landing: its lock is renewed (by the test, as the node would)
	// until C waits for it, then no more; C lands once it expires.
	held, err := eng.LandingLockTake(ctx, target, "ngone", 3*time.Second)
	require.NoError(t, err)
	require.True(t, held)
	stop, renewed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(renewed)
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond): // the dead node's renewal period, not a wait
			}
			if ok, err := eng.LandingLockTake(ctx, target, "ngone", 3*time.Second); err != nil || !ok {
				t.Errorf("ngone's lock not renewed: held %v, %v", ok, err)
				return
			}
		}
	}()
	c := create("from-nb-again", "b", "c.txt")
	testenv.WaitFor(t, "C to wait for the lock of ngone", func() bool { return waitsFor(c, "ngone") })
	close(stop)
	<-renewed
	testenv.WaitFor(t, "nb to take the expired lock over and land C", func() bool { return mission(t, eng, c).Landing == domain.LandingLanded })
	require.Equal(t, lb.NewTarget, onlyLanding(t, eng, c).OldTarget, "C landed onto B's result")
	for file, body := range map[string]string{"a.txt": "from-na", "b.txt": "from-nb", "c.txt": "from-nb-again"} {
		got, err := bareGit(t, bare, "show", "main:"+file)
		require.NoError(t, err, got)
		require.Equal(t, body, got)
	}
	testenv.WaitFor(t, "nb to release the lock it took over", func() bool { return len(locks()) == 0 })
	fsck, err := bareGit(t, bare, "fsck", "--strict", "--no-progress")
	require.NoError(t, err, fsck)
}

// onlyLanding returns the one landing record of mission id, which landed it (a landing redone
// after a refused push would have left another).
func onlyLanding(t *testing.T, eng *engine.Engine, id string) domain.Landing {
	t.Helper()
	d, err := eng.GetMission(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, d.Landings, 1, "mission %s: %+v", id, d.Landings)
	require.Equal(t, "landed", d.Landings[0].Status)
	return d.Landings[0]
}
