package worktree

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// pushableCheckout is a repository whose checked-out main accepts pushes that update the
// checkout (receive.denyCurrentBranch=updateInstead, git's usual way to push into one), a
// clone of it with one commit of the person's to push, and a Manager that opened it (which
// installs the pre-receive hook).
func pushableCheckout(t *testing.T) (*testRepo, string, *Manager, *Repo) {
	t.Helper()
	tr := newTestRepo(t, map[string]string{"base.txt": "base\n"})
	tr.git("config", "receive.denyCurrentBranch", "updateInstead")
	clone := filepath.Join(t.TempDir(), "clone")
	gitIn(t, tr.dir, "clone", "-q", tr.dir, clone)
	writeFile(t, clone, "pushed.txt", "the person's\n")
	gitIn(t, clone, "add", "pushed.txt")
	gitIn(t, clone, "-c", "user.name=Person", "-c", "user.email=person@example.invalid", "commit", "-q", "-m", "the person's commit")
	m := newTestManager(t)
	return tr, clone, m, openRepo(t, m, tr.dir)
}

// requireCheckoutMatchesHEAD fails unless the checkout's index and files are exactly its HEAD.
func requireCheckoutMatchesHEAD(t *testing.T, tr *testRepo) {
	t.Helper()
	require.Empty(t, tr.git("diff", "--cached", "--name-status"), "the index stages nothing against HEAD")
	require.Empty(t, tr.git("status", "--porcelain"), "the checkout is clean")
}

// gatedReceivePack is a receive-pack whose input from the client waits for the file
// <dir>/go; <dir>/ready appears once the client has read the branches' old values and sent
// its first byte. A landing done in between is the race of issue 29: the push then carries an
// old value that is no longer the branch's.
func gatedReceivePack(t *testing.T) (program, dir string) {
	t.Helper()
	dir = t.TempDir()
	program = filepath.Join(dir, "receive-pack")
	script := "#!/bin/sh\n{ head -c 1 >'" + dir + "/first'; touch '" + dir + "/ready'; " +
		"while [ ! -e '" + dir + "/go' ]; do sleep 0.01; done; cat '" + dir + "/first'; exec cat; } | exec git receive-pack \"$@\"\n"
	require.NoError(t, os.WriteFile(program, []byte(script), 0o755))
	return program, dir
}

// A person's push into the checked-out branch that read main before a landing and reaches the
// repository after it: without the hook git rewrote the checkout's index to the pushed tree,
// then refused the push at its compare-and-set, leaving the index staging the reverse of the
// landing (the person's next commit removed landed work: issue 29, item 1). The hook refuses
// such a push before anything is rewritten, saying why and what to do; the landed work stays
// in main, in the index and in the files.
func TestPush_IntoTheCheckoutAfterALandingIsRefusedBeforeTheCheckoutIsRewritten(t *testing.T) {
	t.Parallel()
	tr, clone, m, r := pushableCheckout(t)
	program, gate := gatedReceivePack(t)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "landed.txt", "landed\n")

	pushed := make(chan string, 1)
	go func() {
		out, err := gitTry(clone, "push", "--receive-pack="+program, "origin", "main")
		if err == nil {
			out = "pushed: " + out
		}
		pushed <- out
	}()
	testenv.WaitFor(t, "the push to have read main's old value", func() bool {
		_, err := os.Stat(filepath.Join(gate, "ready"))
		return err == nil
	})
	l := land(t, m, r, ws)
	require.Equal(t, LandLanded, l.Status)
	require.NoError(t, os.WriteFile(filepath.Join(gate, "go"), nil, 0o600))
	out, _ := testenv.Receive(t, "the push to end", pushed)

	require.NotContains(t, out, "pushed: ")
	require.Contains(t, out, "refs/heads/main moved to "+l.Commit)
	require.Contains(t, out, "fetch, merge and push again")
	require.Equal(t, l.Commit, tr.tip("main"))
	requireCheckoutMatchesHEAD(t, tr)
	require.Equal(t, "landed\n", readFile(t, tr.dir, "landed.txt"))
	require.NoFileExists(t, filepath.Join(tr.dir, "pushed.txt"))

	gitIn(t, clone, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
	out, err := gitTry(clone, "push", "origin", "main")
	require.NoError(t, err, "the push after a fetch and merge goes through: %s", out)
	requireCheckoutMatchesHEAD(t, tr)
	require.Equal(t, "landed\n", readFile(t, tr.dir, "landed.txt"))
	require.Equal(t, "the person's\n", readFile(t, tr.dir, "pushed.txt"))
}

// A landing that reaches the checkout while a push into it is between its pre-receive hook
// and its ref update waits for the push to end (the hook's lock is held until
// git-receive-pack exits), then lands on top of the pushed commit. The person's own
// pre-receive hook, found at Open, still runs, after ours, with the push's input.
func TestPush_LandingWaitsForAPushIntoTheCheckoutThenLandsOnTop(t *testing.T) {
	tr := newTestRepo(t, map[string]string{"base.txt": "base\n"})
	tr.git("config", "receive.denyCurrentBranch", "updateInstead")
	signals := t.TempDir()
	persons := "#!/bin/sh\ncat >'" + signals + "/input'\ntouch '" + signals + "/held'\n" +
		"while [ ! -e '" + signals + "/release' ]; do sleep 0.01; done\n"
	require.NoError(t, os.WriteFile(filepath.Join(tr.dir, ".git", "hooks", "pre-receive"), []byte(persons), 0o755))
	clone := filepath.Join(t.TempDir(), "clone")
	gitIn(t, tr.dir, "clone", "-q", tr.dir, clone)
	writeFile(t, clone, "pushed.txt", "the person's\n")
	gitIn(t, clone, "add", "pushed.txt")
	gitIn(t, clone, "-c", "user.name=Person", "-c", "user.email=person@example.invalid", "commit", "-q", "-m", "the person's commit")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	require.Equal(t, persons, readFile(t, tr.dir, ".git/hooks/"+chainedHookName), "the person's hook is kept, chained")
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "landed.txt", "landed\n")

	pushed := make(chan error, 1)
	go func() {
		out, err := gitTry(clone, "push", "origin", "main")
		if err != nil {
			err = &GitError{Stderr: out, Err: err}
		}
		pushed <- err
	}()
	testenv.WaitFor(t, "the person's pre-receive hook to run", func() bool {
		_, err := os.Stat(filepath.Join(signals, "held"))
		return err == nil
	})
	landed := make(chan Landing, 1)
	go func() {
		l, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: ws.MissionID, Attempt: 1, Workspace: ws})
		if err != nil {
			l.Detail = "error: " + err.Error()
		}
		landed <- l
	}()
	testenv.WaitFor(t, "the landing to wait for the checkout lock", func() bool {
		return testenv.GoroutinesIn("worktree.(*Manager).lockCheckout(") == 1
	})
	require.NoError(t, os.WriteFile(filepath.Join(signals, "release"), nil, 0o600))
	err, _ := testenv.Receive(t, "the push to end", pushed)
	require.NoError(t, err)
	l, _ := testenv.Receive(t, "the landing to end", landed)

	require.Equal(t, LandLanded, l.Status, l.Detail)
	require.True(t, isAncestor(t, tr.dir, gitIn(t, clone, "rev-parse", "HEAD"), tr.tip("main")), "the landing is on top of the push")
	requireCheckoutMatchesHEAD(t, tr)
	require.Equal(t, "landed\n", readFile(t, tr.dir, "landed.txt"))
	require.Equal(t, "the person's\n", readFile(t, tr.dir, "pushed.txt"))
	in := strings.Fields(readFile(t, signals, "input"))
	require.Len(t, in, 3, "the person's hook read the push's one line")
	require.Equal(t, "refs/heads/main", in[2])
}

// Open installs the hook once and leaves it alone afterwards; a person's failing pre-receive
// hook still refuses the push; with core.hooksPath set nothing is installed there and the
// repository says why and what to do.
func TestPushHook_InstalledChainedOrExplained(t *testing.T) {
	t.Parallel()
	t.Run("installed", func(t *testing.T) {
		tr, _, _, r := pushableCheckout(t)
		hook := filepath.Join(tr.dir, ".git", "hooks", "pre-receive")
		require.Equal(t, string(pushHook), readFile(t, tr.dir, ".git/hooks/pre-receive"))
		info, err := os.Stat(hook)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o755), info.Mode().Perm())
		require.Empty(t, r.PushHookNote())
		require.NoFileExists(t, filepath.Join(tr.dir, ".git", "hooks", chainedHookName))
		older := strings.Replace(string(pushHook), pushHookMarker+"1", pushHookMarker+"0", 1)
		require.NoError(t, os.WriteFile(hook, []byte(older), 0o755))
		m2 := newTestManager(t)
		openRepo(t, m2, tr.dir)
		require.Equal(t, string(pushHook), readFile(t, tr.dir, ".git/hooks/pre-receive"), "an older version of ours is replaced")
		require.NoFileExists(t, filepath.Join(tr.dir, ".git", "hooks", chainedHookName), "and not chained")
	})
	t.Run("a failing hook of the person's still refuses", func(t *testing.T) {
		tr := newTestRepo(t, nil)
		tr.git("config", "receive.denyCurrentBranch", "updateInstead")
		require.NoError(t, os.WriteFile(filepath.Join(tr.dir, ".git", "hooks", "pre-receive"),
			[]byte("#!/bin/sh\necho 'policy: no pushes today' >&2\nexit 1\n"), 0o755))
		openRepo(t, newTestManager(t), tr.dir)
		clone := filepath.Join(t.TempDir(), "clone")
		gitIn(t, tr.dir, "clone", "-q", tr.dir, clone)
		writeFile(t, clone, "x.txt", "x\n")
		gitIn(t, clone, "add", "x.txt")
		gitIn(t, clone, "-c", "user.name=P", "-c", "user.email=p@example.invalid", "commit", "-q", "-m", "x")
		out, err := gitTry(clone, "push", "origin", "main")
		require.Error(t, err)
		require.Contains(t, out, "policy: no pushes today")
		requireCheckoutMatchesHEAD(t, tr)
	})
	t.Run("core.hooksPath", func(t *testing.T) {
		tr := newTestRepo(t, nil)
		tr.git("config", "core.hooksPath", ".githooks")
		r := openRepo(t, newTestManager(t), tr.dir)
		require.NoFileExists(t, filepath.Join(tr.dir, ".git", "hooks", "pre-receive"))
		require.NoDirExists(t, filepath.Join(tr.dir, ".githooks"))
		standalone := filepath.Join(r.CommonDir(), "mcp-scheduler", "pre-receive")
		require.Contains(t, r.PushHookNote(), "core.hooksPath is .githooks")
		require.Contains(t, r.PushHookNote(), standalone)
		require.Equal(t, string(pushHook), readFile(t, filepath.Dir(standalone), "pre-receive"))
	})
}

// People push into the checkout (updateInstead) from a clone and commit in it while missions
// land one after another: every landed mission's file is on main at the end and in the
// checkout, the person's later `git commit -a` keeps them, and every push either went through
// (its file on main) or was refused with a message.
func TestPush_PeoplePushAndCommitWhileMissionsLandLoseNothing(t *testing.T) {
	t.Parallel()
	const missions = 12
	tr, clone, m, r := pushableCheckout(t)
	done := make(chan struct{})
	pushedFiles := make(chan []string, 1)
	refusals := make(map[string]int)
	go func() { pushedFiles <- pushUntil(clone, done, refusals) }()

	var landed []Landing
	for i := range missions {
		ws := prepare(t, m, r, fmt.Sprintf("m%02d", i), 1)
		writeFile(t, ws.Path, fmt.Sprintf("out/m%02d.txt", i), "mission\n")
		l := land(t, m, r, ws)
		for l.Status == LandWaiting { // the person's files in the way: the landing waits, then goes on
			l = land(t, m, r, ws)
		}
		require.Equal(t, LandLanded, l.Status, "%+v", l)
		landed = append(landed, l)
		tr.write(fmt.Sprintf("person/%02d.txt", i), "the person's\n")
		tr.git("add", "person")
		tr.git("commit", "-q", "-m", fmt.Sprintf("person %d", i))
	}
	close(done)
	pushed, _ := testenv.Receive(t, "the pushing person to stop", pushedFiles)
	tr.write("person/last.txt", "last\n")
	tr.git("add", "person/last.txt")
	tr.git("commit", "-q", "-a", "-m", "the person's last commit")

	requireCheckoutMatchesHEAD(t, tr)
	files := tr.git("ls-tree", "-r", "--name-only", "main")
	for i := range missions {
		require.Contains(t, files, fmt.Sprintf("out/m%02d.txt", i), "mission %d's file is on main", i)
	}
	for _, f := range pushed {
		require.Contains(t, files, f, "a push that went through is on main")
	}
	t.Logf("%d landings, %d pushes went through, refused: %v", len(landed), len(pushed), refusals)
}

// pushUntil commits a file in clone and pushes it into the checkout, again and again until
// done closes, fetching and merging after a refused push; it returns the files of the pushes
// that went through.
func pushUntil(clone string, done <-chan struct{}, refusals map[string]int) []string {
	var ok []string
	for n := 0; ; n++ {
		select {
		case <-done:
			return ok
		default:
		}
		f := fmt.Sprintf("pushed/%03d.txt", n)
		if err := os.MkdirAll(filepath.Join(clone, "pushed"), 0o755); err != nil {
			return ok
		}
		if err := os.WriteFile(filepath.Join(clone, f), []byte("pushed\n"), 0o644); err != nil {
			return ok
		}
		_, _ = gitTry(clone, "add", f)
		_, _ = gitTry(clone, "commit", "-q", "-m", "push "+f)
		out, err := gitTry(clone, "push", "-q", "origin", "main")
		if err == nil {
			ok = append(ok, f)
			continue
		}
		refusals[refusal(out)]++
		_, _ = gitTry(clone, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
	}
}

// refusal is the reason a push was refused, from git's output.
func refusal(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if _, why, ok := strings.Cut(line, "[remote rejected] main -> main "); ok {
			return why
		}
		if _, why, ok := strings.Cut(line, "[rejected] "); ok {
			return why
		}
	}
	return strings.TrimSpace(out)
}
