package worktree

import (
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitHTTPBackend is git's smart HTTP server, run as a CGI program behind Go's net/http.
const gitHTTPBackend = "/usr/lib/git-core/git-http-backend"

// bareRemote is a bare repository made by the test (`git init --bare`), with main holding
// files (pushed from a seed repository), reached by its path or, after serveHTTP, by URL.
type bareRemote struct {
	t    testing.TB
	dir  string // the bare repository
	base string // its parent: the HTTP server's project root
	url  string // what nodes are given: the path, or the http URL
}

func newBareRemote(t testing.TB, files map[string]string) *bareRemote {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "shop.git")
	gitIn(t, base, "init", "-q", "--bare", "-b", "main", dir)
	seed := newTestRepo(t, files)
	seed.git("push", "-q", dir, "main:main")
	return &bareRemote{t: t, dir: dir, base: base, url: dir}
}

// serveHTTP serves the bare repository over smart HTTP on 127.0.0.1 (fetch and push) and
// points url at it.
func (b *bareRemote) serveHTTP() {
	b.t.Helper()
	if _, err := os.Stat(gitHTTPBackend); err != nil {
		if os.Getenv("CI") == "true" {
			b.t.Fatalf("git-http-backend is missing in CI: %v", err)
		}
		b.t.Skipf("git-http-backend not installed: %v", err)
	}
	gitIn(b.t, b.dir, "config", "http.receivepack", "true")
	h := &cgi.Handler{Path: gitHTTPBackend, Env: []string{"GIT_PROJECT_ROOT=" + b.base, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(h) // listens on 127.0.0.1
	b.t.Cleanup(srv.Close)
	b.url = srv.URL + "/shop.git"
}

// tip is the bare repository's branch tip.
func (b *bareRemote) tip(branch string) string {
	b.t.Helper()
	return gitIn(b.t, b.dir, "rev-parse", "--verify", "refs/heads/"+branch)
}

// pushFile commits one file on main in a fresh clone of the remote and pushes it, the way
// another person or node would; it returns the new tip.
func (b *bareRemote) pushFile(rel, content string) string {
	b.t.Helper()
	dir := filepath.Join(b.t.TempDir(), "other")
	gitIn(b.t, filepath.Dir(dir), "clone", "-q", b.dir, dir)
	other := &testRepo{t: b.t, dir: dir}
	other.write(rel, content)
	tip := other.commitAll("outside change " + rel)
	other.git("push", "-q", "origin", "main")
	return tip
}

// refuseWith installs a pre-receive hook that refuses every push with msg.
func (b *bareRemote) refuseWith(msg string) {
	b.t.Helper()
	hook := filepath.Join(b.dir, "hooks", "pre-receive")
	require.NoError(b.t, os.WriteFile(hook, []byte("#!/bin/sh\necho '"+msg+"' >&2\nexit 1\n"), 0o755))
}

// allow removes the refusing hook.
func (b *bareRemote) allow() {
	b.t.Helper()
	require.NoError(b.t, os.Remove(filepath.Join(b.dir, "hooks", "pre-receive")))
}

// remoteManager is a "node": a Manager on its own data dir that knows the remote as "shop".
func remoteManager(t testing.TB, b *bareRemote, tune ...func(*Config)) (*Manager, *Repo) {
	t.Helper()
	m := newTestManager(t, append([]func(*Config){func(c *Config) { c.Remotes = []Remote{{Name: "shop", URL: b.url}} }}, tune...)...)
	r, err := m.Open("shop")
	require.NoError(t, err)
	return m, r
}

// landedOnce counts the commits on main's first-parent history that land the mission's
// attempt 1 (a fast-forward's commit or the merge): 1 when it landed exactly once.
func (b *bareRemote) landedOnce(mission string) int {
	b.t.Helper()
	out := gitIn(b.t, b.dir, "log", "--first-parent", "--format=%B%x01", "main")
	n := 0
	for _, rec := range strings.Split(out, "\x01") {
		if strings.Contains(rec, "Mission-Id: "+mission+"\n") && strings.Contains(rec, "Attempt: 1\n") {
			n++
		}
	}
	return n
}

// showFile is a file's content at rev in the bare repository.
func (b *bareRemote) showFile(rev, rel string) string {
	b.t.Helper()
	out, err := exec.Command("git", "-C", b.dir, "show", rev+":"+rel).CombinedOutput()
	require.NoError(b.t, err, "git show %s:%s: %s", rev, rel, out)
	return string(out)
}
