package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

// The second node of a cluster says another node leads the cluster-wide duties, naming it;
// it used to say "another process leads the scheduler loop on this data dir … stands by",
// which is false for a node on a data dir of its own that runs its own agents (t14 trial).
func TestCluster_SecondNodeSaysAnotherNodeLeadsTheClusterDuties(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	url := pgtest.Database(t)
	first := startClusterNode(t, s, url, "n1")
	testenv.WaitFor(t, "n1 leads", func() bool { return strings.Contains(first.p.stderrText(), "leading the scheduler loop") })
	second := startClusterNode(t, s, url, "n2")
	want := "another node leads the cluster-wide duties (reaping, deadlines, voyage settlement): pid " +
		strconv.Itoa(first.p.cmd.Process.Pid) + " on host "
	testenv.WaitFor(t, "n2 names the leader", func() bool { return strings.Contains(second.p.stderrText(), want) })
	require.Contains(t, second.p.stderrText(), "this daemon is a node of the same cluster and takes those duties over when that one stops")
	require.NotContains(t, second.p.stderrText(), "on this data dir")
	testenv.WaitFor(t, "n2 runs its node", func() bool { return strings.Contains(second.p.stderrText(), "running scheduler node") })
	for _, n := range []*clusterNode{second, first} {
		require.NoError(t, n.p.cmd.Process.Signal(os.Interrupt))
		require.Equal(t, 0, n.p.wait())
	}
}
