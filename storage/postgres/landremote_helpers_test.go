package postgres_test

import (
	"context"
	"log/slog"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// Helpers of BenchmarkRemoteLandingNodesLock: one bare remote over smart HTTP and scheduler
// nodes' worktree Managers on it, as worktree's own remote tests make them
// (worktree/remote_helpers_test.go; those helpers are internal to that package).

// gitHTTPBackend is git's smart HTTP server, run as a CGI program behind Go's net/http.
const gitHTTPBackend = "/usr/lib/git-core/git-http-backend"

// httpRemote is a bare repository with main holding a.txt, served over smart HTTP on
// 127.0.0.1 (fetch and push).
type httpRemote struct {
	dir string // the bare repository
	url string // what nodes are given
}

// newHTTPRemote makes the bare repository and serves it until tb ends. Without
// git-http-backend it skips tb (fails it in CI).
func newHTTPRemote(tb testing.TB) httpRemote {
	tb.Helper()
	if _, err := os.Stat(gitHTTPBackend); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("git-http-backend is missing in CI: %v", err)
		}
		tb.Skipf("git-http-backend not installed: %v", err)
	}
	base := tb.TempDir()
	dir := filepath.Join(base, "shop.git")
	runGit(tb, base, "init", "-q", "--bare", "-b", "main", dir)
	runGit(tb, dir, "config", "http.receivepack", "true")
	seed := filepath.Join(tb.TempDir(), "seed")
	runGit(tb, base, "init", "-q", "-b", "main", seed)
	require.NoError(tb, os.WriteFile(filepath.Join(seed, "a.txt"), []byte("a\n"), 0o644))
	runGit(tb, seed, "add", "-A")
	runGit(tb, seed, "commit", "-q", "-m", "initial")
	runGit(tb, seed, "push", "-q", dir, "main:main")
	h := &cgi.Handler{Path: gitHTTPBackend, Env: []string{"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return httpRemote{dir: dir, url: srv.URL + "/shop.git"}
}

// landedOnce counts the commits on main's first-parent history of the bare repository that
// land mission's attempt 1: 1 when it landed exactly once.
func (r httpRemote) landedOnce(tb testing.TB, mission string) int {
	tb.Helper()
	out := runGit(tb, r.dir, "log", "--first-parent", "--format=%B%x01", "main")
	n := 0
	for _, rec := range strings.Split(out, "\x01") {
		if strings.Contains(rec, "Mission-Id: "+mission+"\n") && strings.Contains(rec, "Attempt: 1\n") {
			n++
		}
	}
	return n
}

// remoteNode is one node's worktree Manager on its own data dir, knowing the remote as
// "shop", with the repository opened (its clone made).
func remoteNode(tb testing.TB, r httpRemote, lost *atomic.Int64) (*worktree.Manager, *worktree.Repo) {
	tb.Helper()
	m, err := worktree.NewManager(worktree.Config{DataDir: filepath.Join(tb.TempDir(), "data"), GitTimeout: time.Minute,
		Remotes: []worktree.Remote{{Name: "shop", URL: r.url}}, Logger: slog.New(lostPushCounter{lost})})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = m.Close() })
	repo, err := m.Open("shop")
	require.NoError(tb, err)
	return m, repo
}

// lostPushMessage is what worktree logs (debug) when its compare-and-set push lost to
// another writer and the landing starts another round (worktree/remotesync.go, pushTarget).
const lostPushMessage = "the remote target moved before the push; starting over"

// lostPushCounter is a slog handler that counts the lost pushes a Manager logs and drops
// every record: the rounds a landing redid inside Land, which its result does not show.
type lostPushCounter struct{ n *atomic.Int64 }

func (lostPushCounter) Enabled(context.Context, slog.Level) bool { return true }

func (c lostPushCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == lostPushMessage {
		c.n.Add(1)
	}
	return nil
}

func (c lostPushCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c lostPushCounter) WithGroup(string) slog.Handler      { return c }

// runGit runs git in dir and returns its trimmed stdout, failing tb on error.
func runGit(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Person", "GIT_AUTHOR_EMAIL=person@example.invalid",
		"GIT_COMMITTER_NAME=Person", "GIT_COMMITTER_EMAIL=person@example.invalid")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(tb, err, "git %v in %s: %s", args, dir, stderr.String())
	return strings.TrimSpace(string(out))
}

// writeWorkspaceFile writes rel (uncommitted: Land commits a workspace's pending work) in a
// workspace.
func writeWorkspaceFile(dir, rel, content string) error {
	return os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644)
}
