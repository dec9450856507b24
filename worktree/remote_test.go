package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// transports runs a test against a bare remote reached by its path, over smart HTTP and
// over ssh, both on loopback.
func transports(t *testing.T, run func(t *testing.T, b *bareRemote)) {
	for _, tc := range []struct {
		name  string
		serve func(t *testing.T, b *bareRemote)
	}{
		{"path", func(*testing.T, *bareRemote) {}},
		{"http", func(_ *testing.T, b *bareRemote) { b.serveHTTP() }},
		{"ssh", func(t *testing.T, b *bareRemote) { b.serveSSH(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBareRemote(t, map[string]string{"a.txt": "a\n"})
			tc.serve(t, b)
			run(t, b)
		})
	}
}

func TestRemote_LandMovesTheRemoteBranch(t *testing.T) {
	transports(t, func(t *testing.T, b *bareRemote) {
		m, r := remoteManager(t, b)
		require.Equal(t, "shop", r.Name())
		rm, ok := r.Remote()
		require.True(t, ok)
		require.Equal(t, b.url, rm.URL)
		require.Equal(t, filepath.Join(m.Config().DataDir, "remotes", "shop"), r.Root())
		branch, err := r.DefaultBranch()
		require.NoError(t, err)
		require.Equal(t, "main", branch, "the default branch is the remote's HEAD")

		ws := prepare(t, m, r, "m", 1)
		require.Equal(t, b.tip("main"), ws.BaseCommit)
		writeFile(t, ws.Path, "b.txt", "b\n")
		l := land(t, m, r, ws)

		require.Equal(t, LandLanded, l.Status)
		require.Equal(t, l.Commit, b.tip("main"), "the remote branch moved to the landing")
		require.Equal(t, "b\n", b.showFile("main", "b.txt"))
		require.Equal(t, 1, b.landedOnce("m"))
		require.Equal(t, l.Commit, gitIn(t, r.Root(), "rev-parse", "refs/heads/main"), "the clone mirrors the push")
		fsckClean(t, b.dir)
		fsckClean(t, r.Root())

		again := land(t, m, r, ws)
		require.Equal(t, LandAlreadyLanded, again.Status)
	})
}

func TestRemote_PrepareStartsFromTheFreshlyFetchedTarget(t *testing.T) {
	t.Parallel()
	b := newBareRemote(t, map[string]string{"a.txt": "a\n"})
	m, r := remoteManager(t, b)
	first := prepare(t, m, r, "m", 1)
	outside := b.pushFile("c.txt", "c\n")
	require.NotEqual(t, first.BaseCommit, outside)

	second := prepare(t, m, r, "n", 1)

	require.Equal(t, outside, second.BaseCommit)
	require.Equal(t, "c\n", readFile(t, second.Path, "c.txt"))
}

func TestRemote_PushRejectedBecauseTheRemoteMovedIsRetriedOntoTheNewTip(t *testing.T) {
	transports(t, func(t *testing.T, b *bareRemote) {
		m, r := remoteManager(t, b)
		ws := prepare(t, m, r, "m", 1)
		writeFile(t, ws.Path, "b.txt", "b\n")
		var checks atomic.Int32
		var outside string
		l, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "m", Attempt: 1, Workspace: ws,
			Check: func(ctx context.Context, dir string) error {
				if checks.Add(1) == 1 { // between this landing's fetch and its push
					outside = b.pushFile("c.txt", "c\n")
				}
				return nil
			}})
		require.NoError(t, err)

		require.Equal(t, LandLanded, l.Status)
		require.EqualValues(t, 2, checks.Load(), "the stale push started the landing over, checks included")
		require.Equal(t, outside, l.OldTarget, "the second round merged onto the new tip")
		require.Equal(t, l.Commit, b.tip("main"))
		require.True(t, isAncestor(t, b.dir, outside, "main"), "the outside change is kept")
		require.Equal(t, "b\n", b.showFile("main", "b.txt"))
		require.Equal(t, "c\n", b.showFile("main", "c.txt"))
		fsckClean(t, b.dir)
	})
}

func TestRemote_RefusedPushIsAnErrorCarryingTheHookMessage(t *testing.T) {
	transports(t, func(t *testing.T, b *bareRemote) {
		m, r := remoteManager(t, b)
		ws := prepare(t, m, r, "m", 1)
		writeFile(t, ws.Path, "b.txt", "b\n")
		before := b.tip("main")
		b.refuseWith("main is frozen for the release")

		_, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "m", Attempt: 1, Workspace: ws})

		require.ErrorIs(t, err, ErrPushRefused)
		var ge *GitError
		require.ErrorAs(t, err, &ge)
		require.Contains(t, ge.Stderr, "main is frozen for the release")
		require.Contains(t, err.Error(), "main is frozen for the release")
		require.Equal(t, before, b.tip("main"), "nothing moved")

		b.allow()
		l := land(t, m, r, ws)
		require.Equal(t, LandLanded, l.Status, "the same landing goes through once the remote accepts it")
		require.Equal(t, "b\n", b.showFile("main", "b.txt"))
	})
}

func TestRemote_TwoNodesLandingConcurrentlyLoseNothing(t *testing.T) {
	transports(t, func(t *testing.T, b *bareRemote) {
		const perNode = 3
		var wg sync.WaitGroup
		errs := make(chan error, 2*perNode)
		for node := range 2 {
			m, r := remoteManager(t, b)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perNode {
					errs <- landUntilDone(t, m, r, fmt.Sprintf("n%dm%d", node, i))
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		for node := range 2 {
			for i := range perNode {
				id := fmt.Sprintf("n%dm%d", node, i)
				require.Equal(t, id+"\n", b.showFile("main", id+".txt"), "landing %s is on the remote", id)
				require.Equal(t, 1, b.landedOnce(id), "landing %s is there once", id)
			}
		}
		fsckClean(t, b.dir)
	})
}

// landUntilDone prepares and lands one mission writing <id>.txt; a landing whose target kept
// moving (ErrTargetMoving: nothing lost) is landed again, as the scheduler's next pass does.
func landUntilDone(t *testing.T, m *Manager, r *Repo, id string) error {
	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: id, Attempt: 1})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ws.Path, id+".txt"), []byte(id+"\n"), 0o644); err != nil {
		return err
	}
	for {
		l, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: id, Attempt: 1, Workspace: ws})
		if errors.Is(err, ErrTargetMoving) {
			continue
		}
		if err != nil {
			return err
		}
		if l.Status != LandLanded {
			return fmt.Errorf("%s: %s", id, l.Status)
		}
		return nil
	}
}

func TestRemote_BatchLandsOntoTheRemote(t *testing.T) {
	t.Parallel()
	b := newBareRemote(t, map[string]string{"a.txt": "a\n"})
	m, r := remoteManager(t, b)
	var reqs []LandRequest
	for _, id := range []string{"x", "y", "z"} {
		ws := prepare(t, m, r, id, 1)
		writeFile(t, ws.Path, id+".txt", id+"\n")
		reqs = append(reqs, LandRequest{Repo: r, MissionID: id, Attempt: 1, Workspace: ws})
	}
	outside := b.pushFile("c.txt", "c\n") // the batch starts from a target that moved since

	out, err := m.LandBatch(ctxT(t), reqs)

	require.NoError(t, err)
	for i, bl := range out {
		require.NoError(t, bl.Err, reqs[i].MissionID)
		require.Equal(t, LandLanded, bl.Landing.Status, reqs[i].MissionID)
		require.Equal(t, b.tip("main"), bl.Landing.NewTarget)
	}
	require.True(t, isAncestor(t, b.dir, outside, "main"))
	for _, id := range []string{"x", "y", "z"} {
		require.Equal(t, id+"\n", b.showFile("main", id+".txt"))
	}
	fsckClean(t, b.dir)
}

func TestRemote_CleanupAndKnownRepositories(t *testing.T) {
	t.Parallel()
	b := newBareRemote(t, map[string]string{"a.txt": "a\n"})
	clock := &fakeClock{now: time.Now()}
	m, r := remoteManager(t, b, func(c *Config) { c.Now = clock.Now })
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "b.txt", "b\n")
	land(t, m, r, ws)
	clock.Add(48 * time.Hour)

	roots, err := m.KnownRepositories()
	require.NoError(t, err)
	require.Equal(t, []string{r.Root()}, roots)
	again, err := m.Open(roots[0])
	require.NoError(t, err)
	require.Same(t, r, again, "a path inside the clone opens the remote repository")

	rep, err := m.Cleanup(ctxT(t), CleanupRequest{Repo: r, OlderThan: time.Hour})
	require.NoError(t, err)
	require.Len(t, rep.Removed, 1, "the landed workspace is removed: %+v", rep)
	require.NoDirExists(t, ws.Path)
}

func TestRemote_MainStrategyIsRefused(t *testing.T) {
	t.Parallel()
	b := newBareRemote(t, nil)
	m, r := remoteManager(t, b)
	_, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1, Strategy: StrategyMain})
	require.ErrorIs(t, err, ErrInvalidStrategy)
	require.Contains(t, err.Error(), "no checkout of its own")
}

func TestRemote_UnreachableRemoteIsAClearError(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nowhere.git")
	m := newTestManager(t, func(c *Config) { c.Remotes = []Remote{{Name: "shop", URL: missing}} })
	_, err := m.Open("shop")
	var ge *GitError
	require.ErrorAs(t, err, &ge)
	require.Contains(t, err.Error(), "remote repository shop ("+missing+")")
	require.NoDirExists(t, filepath.Join(m.Config().DataDir, "remotes", "shop"), "a failed clone leaves nothing")
}

func TestRemoteName(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]string{
		"ssh://git@host/team/shop.git":     "shop",
		"git@host:team/shop.git":           "shop",
		"https://host/team/shop/":          "shop",
		"/srv/git/shop.git":                "shop",
		"file:///srv/git/my shop.git":      "my-shop",
		"http://127.0.0.1:8080/x/Back.End": "Back.End",
		"/":                                "",
	} {
		require.Equal(t, want, RemoteName(url), url)
	}
}

func TestRemote_ConfigIsValidated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		remotes []Remote
		want    string
	}{
		{[]Remote{{Name: "a/b", URL: "/srv/x.git"}}, "must match"},
		{[]Remote{{Name: "shop", URL: "ext::sh -c evil"}}, "remote helper"},
		{[]Remote{{Name: "shop", URL: "ftp://host/x.git"}}, "scheme"},
		{[]Remote{{Name: "shop", URL: "relative/x.git"}}, "neither an absolute path"},
		{[]Remote{{Name: "shop", URL: "-oProxyCommand=x"}}, "starts with '-'"},
		{[]Remote{{Name: "shop", URL: "/a.git"}, {Name: "shop", URL: "/b.git"}}, "used twice"},
	} {
		_, err := NewManager(Config{DataDir: t.TempDir(), Remotes: tc.remotes})
		require.ErrorContains(t, err, tc.want, "%+v", tc.remotes)
	}
}

// A bare repository made with a plain `git init --bare` names master as its HEAD; work pushed
// to main leaves that HEAD unborn. The error names the HEAD's branch, the branches there are
// and the command that repairs it, not "push a first commit".
func TestRemote_UnbornHeadNamesTheBranchesThereAre(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "shop.git")
	gitIn(t, base, "init", "-q", "--bare", "-b", "master", dir)
	seed := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	seed.git("push", "-q", dir, "HEAD:refs/heads/main")
	m := newTestManager(t, func(c *Config) { c.Remotes = []Remote{{Name: "shop", URL: dir}} })
	_, err := m.Open("shop")
	require.Error(t, err)
	require.Contains(t, err.Error(), "the remote's default branch master (its HEAD) has no commit; its branches are main")
	require.Contains(t, err.Error(), "git --git-dir="+dir+" symbolic-ref HEAD refs/heads/main")
	require.NoDirExists(t, filepath.Join(m.Config().DataDir, "remotes", "shop"), "a failed clone leaves nothing")

	gitIn(t, dir, "symbolic-ref", "HEAD", "refs/heads/main") // the repair the message names
	r, err := m.Open("shop")
	require.NoError(t, err)
	branch, err := r.DefaultBranch()
	require.NoError(t, err)
	require.Equal(t, "main", branch)
}

func TestRemote_EmptyRemoteSaysPushAFirstCommit(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "shop.git")
	gitIn(t, filepath.Dir(dir), "init", "-q", "--bare", "-b", "main", dir)
	m := newTestManager(t, func(c *Config) { c.Remotes = []Remote{{Name: "shop", URL: dir}} })
	_, err := m.Open("shop")
	require.ErrorContains(t, err, "the remote has no commit yet: push a first commit to it")
}

// A mission naming a remote repository this process was not configured with (added to the
// file after serve or daemon started) says so and what to do, not "lstat shop2: no such file".
func TestRemote_UnknownNameSaysTheConfigurationIsReadAtStart(t *testing.T) {
	t.Parallel()
	b := newBareRemote(t, nil)
	m, _ := remoteManager(t, b)
	_, err := m.Open("shop2")
	require.ErrorIs(t, err, ErrNotRepository)
	require.ErrorContains(t, err, "no remote repository of that name in this process's configuration, which it read when it started")
}
