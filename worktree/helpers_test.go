package worktree

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// testRepo is a real git repository in a temporary directory, driven by the git CLI the way a
// person would.
type testRepo struct {
	t   testing.TB
	dir string
}

// newTestRepo creates a repository on branch main with the given files committed.
func newTestRepo(t testing.TB, files map[string]string) *testRepo {
	t.Helper()
	return newTestRepoAt(t, filepath.Join(t.TempDir(), "repo"), files)
}

func newTestRepoAt(t testing.TB, dir string, files map[string]string) *testRepo {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	tr := &testRepo{t: t, dir: dir}
	tr.git("init", "-q", "-b", "main")
	tr.git("config", "user.name", "Person")
	tr.git("config", "user.email", "person@example.invalid")
	tr.git("config", "commit.gpgSign", "false")
	if len(files) == 0 {
		files = map[string]string{"README.md": "hello\n"}
	}
	for name, content := range files {
		tr.write(name, content)
	}
	tr.commitAll("initial")
	return tr
}

// gitIn runs git in dir and returns trimmed stdout, failing the test on error.
func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitTry(dir, args...)
	require.NoError(t, err, "git %v in %s: %s", args, dir, out)
	return strings.TrimSpace(out)
}

// gitTry runs git in dir and returns combined output and the error.
func gitTry(dir string, args ...string) (string, error) { return gitTryEnv(dir, nil, args...) }

// gitTryEnv is gitTry with extra environment (such as GIT_COMMITTER_DATE).
func gitTryEnv(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Person", "GIT_AUTHOR_EMAIL=person@example.invalid",
		"GIT_COMMITTER_NAME=Person", "GIT_COMMITTER_EMAIL=person@example.invalid"), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (tr *testRepo) git(args ...string) string { tr.t.Helper(); return gitIn(tr.t, tr.dir, args...) }

func (tr *testRepo) write(rel, content string) { tr.t.Helper(); writeFile(tr.t, tr.dir, rel, content) }

func (tr *testRepo) commitAll(msg string) string {
	tr.t.Helper()
	tr.git("add", "-A")
	tr.git("commit", "-q", "--no-verify", "-m", msg)
	return tr.git("rev-parse", "HEAD")
}

func (tr *testRepo) tip(branch string) string {
	tr.t.Helper()
	return tr.git("rev-parse", "--verify", "refs/heads/"+branch)
}

func writeFile(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func readFile(t testing.TB, dir, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rel))
	require.NoError(t, err)
	return string(data)
}

// newTestManager returns a Manager on a fresh data dir; it is closed when the test ends.
func newTestManager(t testing.TB, tune ...func(*Config)) *Manager {
	t.Helper()
	cfg := Config{DataDir: filepath.Join(t.TempDir(), "data"), GitTimeout: time.Minute}
	for _, f := range tune {
		f(&cfg)
	}
	m, err := NewManager(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), testenv.WaitDeadline(t))
	t.Cleanup(cancel)
	return ctx
}

func openRepo(t testing.TB, m *Manager, dir string) *Repo {
	t.Helper()
	r, err := m.Open(dir)
	require.NoError(t, err)
	return r
}

func prepare(t testing.TB, m *Manager, r *Repo, mission string, attempt int) Workspace {
	t.Helper()
	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: mission, Attempt: attempt})
	require.NoError(t, err)
	return ws
}

// land lands an attempt with default options and fails the test on error.
func land(t testing.TB, m *Manager, r *Repo, ws Workspace) Landing {
	t.Helper()
	l, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: ws.MissionID, Attempt: ws.Attempt, Workspace: ws})
	require.NoError(t, err)
	return l
}

// countTrailer counts the commits reachable from ref whose message carries the mission
// attempt's trailers.
func countTrailer(t testing.TB, dir, ref, mission string, attempt int) int {
	t.Helper()
	out := gitIn(t, dir, "log", "--format=%H%x00%B%x01", ref)
	n := 0
	for _, rec := range strings.Split(out, "\x01") {
		if strings.Contains(rec, "Mission-Id: "+mission+"\n") && strings.Contains(rec, fmt.Sprintf("Attempt: %d\n", attempt)) {
			n++
		}
	}
	return n
}

// isAncestor reports whether commit a is an ancestor of (or equal to) b.
func isAncestor(t testing.TB, dir, a, b string) bool {
	t.Helper()
	_, err := gitTry(dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

func fsckClean(t testing.TB, dir string) {
	t.Helper()
	out, err := gitTry(dir, "fsck", "--strict", "--no-progress")
	require.NoError(t, err, "git fsck: %s", out)
	require.NotContains(t, out, "error")
}

// waitOrphansGone waits until no process works in the repository or the data dir: the git
// children of SIGKILLed helpers, orphaned, finish what they were doing before the test
// inspects the repository.
func waitOrphansGone(t testing.TB, dirs ...string) {
	t.Helper()
	var left []string
	testenv.WaitForState(t, "the killed helpers' orphaned git processes to finish", func() bool {
		left = nil
		for _, d := range dirs {
			left = append(left, testenv.ProcessesIn(d)...)
		}
		return len(left) == 0
	}, func() string { return fmt.Sprintf("still running: %v", left) })
}
