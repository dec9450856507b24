package main

import (
	"context"
	"net/http/cgi"
	"net/http/httptest"
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

// bareGit runs git in the bare remote and returns its trimmed output.
func bareGit(t *testing.T, bare string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", bare}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// A repository named by a git remote in a cluster: node n1 runs a mission whose agent leaves
// its work uncommitted, and the mission completes waiting for approval of its landing; n1
// published the attempt's branch to the remote (its pending work committed). n1 is SIGKILLed,
// n2 starts, the landing is approved, and n2 (the leader now) lands the dead node's work from
// the published branch: the remote's main holds it once, the attempt branch is deleted from
// the remote, fsck is clean.
func TestCluster_RemoteRepositoryLandsAStoppedNodesPublishedWork(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	url := pgtest.Database(t)
	s.env = append(s.env, EnvDatabaseURL+"="+url)
	ctx := context.Background()
	bare := filepath.Join(t.TempDir(), "shop.git")
	out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).CombinedOutput()
	require.NoError(t, err, "%s", out)
	gitOut(t, s, "push", "-q", bare, "main:main")
	repos := "[[repositories]]\nremote = \"" + bare + "\"\nlanding = \"approval\"\n"

	st, err := postgres.Open(ctx, url, postgres.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	eng := engine.New(st, engine.Options{DefaultRepository: "shop", ResolveRepository: func(p string) (string, error) { return p, nil }})

	nodes := map[string]*clusterNode{"n1": startNode(t, s, nodeSpec{url: url, name: "n1", extra: repos})}
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
	c, err := eng.CreateMission(ctx, engine.MissionSpec{Title: "remote work", Repository: "shop", WriteArea: []string{"r.txt"},
		Brief: "@write r.txt from n1\n@done ok"}, "test")
	require.NoError(t, err)
	m := c.Mission
	get := func() engine.MissionDetail {
		d, err := eng.GetMission(ctx, m.ID)
		require.NoError(t, err)
		return d
	}
	testenv.WaitFor(t, "the mission to complete on n1, its landing waiting for approval", func() bool {
		got := get().Mission
		return got.State == domain.StateCompleted && got.Landing == domain.LandingApproval
	})
	require.Equal(t, "n1", get().Mission.Node)
	branch := "mcp-scheduler/" + m.ID + "/a1"
	published, err := bareGit(t, bare, "show", branch+":r.txt")
	require.NoError(t, err, "the attempt's branch is on the remote: %s", published)
	require.Equal(t, "from n1", published, "with the work the agent left uncommitted")

	nodes["n1"].p.kill() // SIGKILL: its clone, holding the branch too, is out of reach now
	nodes["n2"] = startNode(t, s, nodeSpec{url: url, name: "n2", extra: repos})
	_, err = eng.ApproveLanding(ctx, m.ID, "ship it", "test")
	require.NoError(t, err)
	testenv.WaitFor(t, "n2 to land n1's work from the remote", func() bool { return get().Mission.Landing == domain.LandingLanded })

	main, err := bareGit(t, bare, "show", "main:r.txt")
	require.NoError(t, err, main)
	require.Equal(t, "from n1", main)
	log, err := bareGit(t, bare, "log", "--first-parent", "--format=%B", "main")
	require.NoError(t, err, log)
	require.Equal(t, 1, strings.Count(log, "Mission-Id: "+m.ID), "landed once:\n%s", log)
	_, err = bareGit(t, bare, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	require.Error(t, err, "the settled attempt's branch is deleted from the remote")
	fsck, err := bareGit(t, bare, "fsck", "--strict", "--no-progress")
	require.NoError(t, err, fsck)
}

// gitRemote is a bare repository made by a test, holding the sandbox repository's main,
// served over smart HTTP on 127.0.0.1 (git-http-backend behind net/http/cgi).
type gitRemote struct {
	dir, url string
}

// serveBareRemote makes and serves the remote until the test ends.
func serveBareRemote(t *testing.T, s *sandbox) *gitRemote {
	t.Helper()
	const backend = "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git-http-backend is missing in CI: %v", err)
		}
		t.Skipf("git-http-backend not installed: %v", err)
	}
	base := t.TempDir()
	r := &gitRemote{dir: filepath.Join(base, "shop.git")}
	out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", r.dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	r.git(t, "config", "http.receivepack", "true")
	gitOut(t, s, "push", "-q", r.dir, "main:main")
	srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/shop.git"
	return r
}

// config is the [[repositories]] entry naming the remote by url (its name is "shop").
func (r *gitRemote) config(url string) string {
	return "[[repositories]]\nremote = \"" + url + "\"\n"
}

// git runs git in the bare repository and returns its output.
func (r *gitRemote) git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", r.dir}, args...)...).CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}
