package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// clusterConfig is one node's configuration: the reference agent, short leases (so a killed
// node's missions are taken over within seconds), two agents per node, then extra.
func clusterConfig(node, extra string) string {
	return `[scheduler]
tick = "100ms"
lease_ttl = "6s"
renew_interval = "1s"
leader_lease = "3s"
max_concurrency = 2
[node]
name = "` + node + `"
[[profiles]]
name = "ref"
runtime = "ndjson"
command = ["{mcp_scheduler}", "reference-agent"]
env = ["PATH", "HOME"]
` + extra
}

// clusterNode is one daemon of a cluster test: its name, data dir and process.
type clusterNode struct {
	name, dataDir string
	p             *proc
}

// startClusterNode starts a daemon with its own data dir and configuration on the shared
// database (url) and repository, with args after "daemon".
func startClusterNode(t *testing.T, s *sandbox, url, name string, args ...string) *clusterNode {
	t.Helper()
	return startNode(t, s, nodeSpec{url: url, name: name, args: args})
}

// nodeSpec is what a cluster node is started with: the database URL, its name, configuration
// appended to clusterConfig's, and the arguments after "daemon".
type nodeSpec struct {
	url, name, extra string
	args             []string
}

// startNode starts the daemon of a cluster node (startClusterNode, with configuration).
func startNode(t *testing.T, s *sandbox, ns nodeSpec) *clusterNode {
	t.Helper()
	home := filepath.Join(s.home, ns.name)
	cfg := filepath.Join(home, "config", "mcp-scheduler", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
	require.NoError(t, os.WriteFile(cfg, []byte(clusterConfig(ns.name, ns.extra)), 0o600))
	n := &clusterNode{name: ns.name, dataDir: filepath.Join(home, "state")}
	n.p = s.start([]string{EnvDatabaseURL + "=" + ns.url, EnvDataDir + "=" + n.dataDir,
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config")}, append([]string{"daemon"}, ns.args...)...)
	return n
}

// Three daemons on one PostgreSQL database and one git remote (a bare repository served over
// smart HTTP on 127.0.0.1) share a 100-mission voyage: every node runs missions of it on its
// own agents (the lease records the node) and lands onto the remote from its own clone. One
// node is SIGKILLed while its agents run; another (n3, whose database and git traffic pass
// through cutProxy) is partitioned for longer than a lease while it runs a mission, then healed.
// The others take the killed and the partitioned node's missions over when their leases
// expire, the partitioned node's late results are refused by epoch, and every mission completes
// and lands exactly once on the remote; the remote's fsck is clean, status lists the nodes (the
// killed one not running), and no agent process outlives the test.
func TestCluster_ThreeNodesShareAVoyageAndSurviveAKilledAndAPartitionedNode(t *testing.T) {
	s := newSandbox(t)
	url := pgtest.Database(t)
	s.env = append(s.env, EnvDatabaseURL+"="+url) // the CLI reads the cluster's database
	ctx := context.Background()
	st, err := postgres.Open(ctx, url, postgres.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	eng := engine.New(st, engine.Options{DefaultRepository: "shop", ResolveRepository: func(p string) (string, error) { return p, nil }})
	remote := serveBareRemote(t, s)
	dbCut, gitCut := startCutProxy(t, hostOf(t, url)), startCutProxy(t, hostOf(t, remote.url))

	nodes := map[string]*clusterNode{}
	for _, name := range []string{"n1", "n2"} {
		nodes[name] = startNode(t, s, nodeSpec{url: url, name: name, extra: remote.config(remote.url)})
	}
	nodes["n3"] = startNode(t, s, nodeSpec{url: withHost(t, url, dbCut.Addr()), name: "n3", extra: remote.config(withHost(t, remote.url, gitCut.Addr()))})
	t.Cleanup(func() { requireNoAgentsLeft(t, nodes) })
	t.Cleanup(func() {
		if t.Failed() {
			dumpCluster(t, eng, nodes)
		}
	})

	const count = 100
	spec := engine.VoyageSpec{Title: "cluster voyage"}
	for i := range count {
		f := fmt.Sprintf("f%02d.txt", i)
		spec.Missions = append(spec.Missions, engine.MissionSpec{Key: fmt.Sprintf("m%02d", i), Title: "write " + f,
			WriteArea: []string{f}, Brief: fmt.Sprintf("@sleep 1s\n@write %s %d\n@commit %s\n@done ok", f, i, f)})
	}
	d, err := eng.Dispatch(ctx, spec, "test")
	require.NoError(t, err)

	victim := runningOn(t, eng, d.Voyage.ID, "n2")
	nodes["n2"].p.kill() // SIGKILL: no lease given up, its agents orphaned
	cutOff := runningOn(t, eng, d.Voyage.ID, "n3")
	dbCut.cut()
	gitCut.cut()
	testenv.WaitFor(t, "n3's mission to be taken over while n3 is cut off", func() bool {
		m := mission(t, eng, cutOff)
		return m.Attempt > 1 && m.Node != "n3" && m.Node != ""
	})
	dbCut.heal()
	gitCut.heal()

	// A hundred landings onto one target are serial (the landing lock), so on a loaded machine
	// the voyage takes longer than any fixed bound: the wait ends only at the binary's deadline.
	var landed, all int
	testenv.WaitForState(t, "every mission to complete and land", func() bool {
		ms := voyageMissions(t, eng, d.Voyage.ID)
		landed, all = 0, len(ms)
		for _, m := range ms {
			if m.State == domain.StateCompleted && m.Landing.Satisfies() {
				landed++
			}
		}
		return landed == all
	}, func() string { return fmt.Sprintf("%d of %d landed", landed, all) })
	history := remote.git(t, "log", "--first-parent", "--format=%B%x01", "main")
	ran := map[string]int{}
	for _, m := range voyageMissions(t, eng, d.Voyage.ID) {
		ran[m.Node]++
		det, err := eng.GetMission(ctx, m.ID)
		require.NoError(t, err)
		landed := 0
		for _, l := range det.Landings {
			if l.Status == "landed" {
				landed++
			}
		}
		require.Equal(t, 1, landed, "mission %s landed once: %+v", m.ID, det.Landings)
		require.LessOrEqual(t, strings.Count(history, "Mission-Id: "+m.ID+"\n"), 1, "mission %s is on the remote's main at most once by trailer", m.ID)
		n := strings.TrimPrefix(m.Key, "m")
		require.Equal(t, strings.TrimPrefix(n, "0"), strings.TrimSpace(remote.git(t, "show", "main:f"+n+".txt")), m.Key)
	}
	for id, who := range map[string]string{victim: "n2", cutOff: "n3"} {
		v, err := eng.GetMission(ctx, id)
		require.NoError(t, err)
		require.NotEqual(t, who, v.Mission.Node, "%s's mission was taken over: %+v", who, v.Attempts)
		require.Greater(t, v.Mission.Attempt, 1)
	}
	require.Zero(t, ran[""], "every lease named its node: %v", ran)
	require.True(t, ran["n1"] > 0 && ran["n3"] > 0, "the surviving nodes both ran missions: %v", ran)
	remote.git(t, "fsck", "--strict", "--no-progress")
	require.Empty(t, strings.TrimSpace(remote.git(t, "for-each-ref", "refs/heads/mcp-scheduler/")),
		"every landed attempt's published branch was deleted from the remote")

	out, errs, code := s.cli("status")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "nodes       2 live:")
	require.Contains(t, out, "not running: n2")

	// n2 comes back on its data dir and runs its node again; a second process started on n1's
	// data dir (so named n1 too) waits while n1 lives, and says so.
	nodes["n2"] = startNode(t, s, nodeSpec{url: url, name: "n2", extra: remote.config(remote.url)})
	testenv.WaitFor(t, "n2 to run again", func() bool {
		out, _, _ := s.cli("status")
		return strings.Contains(out, "nodes       3 live:")
	})
	twin := startNode(t, s, nodeSpec{url: url, name: "n1", extra: remote.config(remote.url)})
	nodes["n1-twin"] = twin
	testenv.WaitFor(t, "the second n1 to say it waits", func() bool {
		return strings.Contains(twin.p.stderrText(), "node is run by another live process")
	})
}

// runningOn waits until node runs a mission of the voyage while another node runs or has
// completed one, and returns that mission's id.
func runningOn(t *testing.T, eng *engine.Engine, voyage, node string) string {
	t.Helper()
	var id string
	testenv.WaitFor(t, node+" to run a mission while another node runs one too", func() bool {
		id = ""
		others := false
		for _, m := range voyageMissions(t, eng, voyage) {
			if m.State == domain.StateRunning && m.Node == node {
				id = m.ID
			} else if (m.State == domain.StateRunning || m.State == domain.StateCompleted) && m.Node != node && m.Node != "" {
				others = true
			}
		}
		return id != "" && others
	})
	return id
}

// mission reads one mission.
func mission(t *testing.T, eng *engine.Engine, id string) domain.Mission {
	t.Helper()
	d, err := eng.GetMission(context.Background(), id)
	require.NoError(t, err)
	return d.Mission
}

// voyageMissions lists a voyage's missions.
func voyageMissions(t *testing.T, eng *engine.Engine, voyage string) []domain.Mission {
	t.Helper()
	ms, err := eng.ListMissions(context.Background(), engine.MissionFilter{VoyageID: voyage, Limit: 1000})
	require.NoError(t, err)
	return ms
}

// gitOut runs git in the sandbox repository and returns its output.
func gitOut(t *testing.T, s *sandbox, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", s.repo}, args...)...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// requireNoAgentsLeft stops the nodes still running and waits until no process
// works in any node's data dir: the killed node's orphaned agents end on their own (their
// briefs are short), the others' are stopped or finish.
func requireNoAgentsLeft(t *testing.T, nodes map[string]*clusterNode) {
	for _, n := range nodes {
		if n.p.cmd.ProcessState == nil {
			_ = n.p.cmd.Process.Signal(os.Interrupt)
			n.p.wait()
		}
	}
	var left []string
	testenv.WaitForState(t, "no agent process left in the nodes' data dirs", func() bool {
		left = processesUnder(nodes)
		return len(left) == 0
	}, func() string { return fmt.Sprintf("agent processes outlived the test: %v", left) })
}

// processesUnder lists the processes whose working directory is inside a node's data dir.
func processesUnder(nodes map[string]*clusterNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, describe(processesUsing(n.dataDir, false))...)
	}
	return out
}

// dumpCluster logs the missions and each node's log tail, for a failed cluster test.
func dumpCluster(t *testing.T, eng *engine.Engine, nodes map[string]*clusterNode) {
	ms, err := eng.ListMissions(context.Background(), engine.MissionFilter{Limit: 1000})
	if err != nil {
		t.Logf("list missions: %v", err)
	}
	for _, m := range ms {
		t.Logf("%s %s state=%s landing=%s node=%s attempt=%d owner=%s", m.ID, m.Key, m.State, m.Landing, m.Node, m.Attempt, m.Lease.Owner)
		if m.State == domain.StateFailed || m.State == domain.StateBlocked {
			if d, err := eng.GetMission(context.Background(), m.ID); err == nil {
				for _, a := range d.Attempts {
					t.Logf("  attempt %d: %+v", a.Attempt, a)
				}
			}
		}
	}
	for name, n := range nodes {
		log := n.p.stderrText()
		t.Logf("node %s log (last 6000 bytes):\n%s", name, log[max(0, len(log)-6000):])
	}
}
