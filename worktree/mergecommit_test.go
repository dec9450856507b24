package worktree

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
)

// The commit writeCommit encodes is the object `git commit-tree` makes from the same inputs
// (same identity, same dates in the same zone): same id, same bytes, a clean fsck, and a
// read-only loose object as git's own.
func TestWriteCommit_ByteIdenticalToCommitTree(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	ours := tr.tip("main")
	tr.git("checkout", "-q", "-b", "side")
	tr.write("b.txt", "b\n")
	theirs := tr.commitAll("side")
	tree := tr.git("rev-parse", "side^{tree}")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	sig := Signature{Name: "mcp-scheduler", Email: "mcp-scheduler@localhost"}
	for i, tc := range []struct {
		zone *time.Location
		msg  string
	}{
		{time.UTC, withTrailers("", "Land mission m1 attempt 1", "m1", 1)},
		{time.FixedZone("IST", 5*3600+1800), withTrailers("Add B\n\nBody text.", "", "m-2", 3)},
		{time.FixedZone("PST", -8*3600), withTrailers("Ünïcödé — 日本語\n\n\n  indented\n", "", "m3", 12)},
		{time.Local, "no trailing newline"},
	} {
		when := time.Unix(1900000000+int64(i)*3600, 0).In(tc.zone)
		h, err := r.writeCommit(sig, when, plumbing.NewHash(tree), []plumbing.Hash{plumbing.NewHash(ours), plumbing.NewHash(theirs)}, tc.msg)
		require.NoError(t, err)
		date := fmt.Sprintf("%d %s", when.Unix(), when.Format("-0700"))
		cmd := gitCmd(tr.dir, "commit-tree", "--no-gpg-sign", "-p", ours, "-p", theirs, "-F", "-", tree)
		cmd.Env = append(cmd.Env, "GIT_AUTHOR_NAME="+sig.Name, "GIT_AUTHOR_EMAIL="+sig.Email, "GIT_AUTHOR_DATE="+date,
			"GIT_COMMITTER_NAME="+sig.Name, "GIT_COMMITTER_EMAIL="+sig.Email, "GIT_COMMITTER_DATE="+date)
		cmd.Stdin = strings.NewReader(tc.msg)
		out, err := cmd.Output()
		require.NoError(t, err)
		require.Equal(t, strings.TrimSpace(string(out)), h.String(), "case %d: %q", i, tc.msg)
		raw := tr.git("cat-file", "commit", h.String())
		require.Contains(t, raw, "author mcp-scheduler <mcp-scheduler@localhost> "+date)
		st, err := os.Stat(filepath.Join(r.commonDir, "objects", h.String()[:2], h.String()[2:]))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o444), st.Mode().Perm())
	}
	fsckClean(t, tr.dir)
}

// A landing that merges writes its merge commit without starting git commit-tree: the
// manager's identity, the current time in the local zone, both parents, the trailers.
func TestLand_MergeCommitWrittenWithoutCommitTree(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	tr.git("checkout", "-q", "--detach")
	logs := &syncBuffer{}
	m := newTestManager(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	r := openRepo(t, m, tr.dir)
	wa := prepareMain(t, m, r, "a")
	wb := prepareMain(t, m, r, "b")
	writeFile(t, wa.Path, "a.txt", "A\n")
	writeFile(t, wb.Path, "b.txt", "B\n")
	require.True(t, land(t, m, r, wa).FastForward)
	before := time.Now().Unix()
	lb := land(t, m, r, wb)
	after := time.Now().Unix()

	require.Equal(t, LandLanded, lb.Status)
	require.False(t, lb.FastForward)
	require.NotContains(t, logs.String(), "commit-tree")
	raw := tr.git("cat-file", "commit", lb.Commit)
	require.Contains(t, raw, "\nparent "+lb.OldTarget+"\nparent "+lb.BranchTip+"\n")
	var ts int64
	var zone string
	for _, who := range []string{"author", "committer"} {
		line := lineStarting(raw, who+" ")
		_, err := fmt.Sscanf(line, who+" mcp-scheduler <mcp-scheduler@localhost> %d %s", &ts, &zone)
		require.NoError(t, err, line)
		require.True(t, ts >= before && ts <= after, "%s time %d outside [%d, %d]", who, ts, before, after)
		require.Equal(t, time.Unix(ts, 0).Format("-0700"), zone)
	}
	require.True(t, strings.HasSuffix(raw, "\n\nLand mission b attempt 1\n\nMission-Id: b\nAttempt: 1"), raw) // tr.git trims the last newline
	fsckClean(t, tr.dir)
}

// Where git would write another object — a commit encoding in the configuration, an
// identity git cleans up — the merge commit is left to git commit-tree, and a configuration
// change is noticed at the next landing.
func TestLand_MergeCommitLeftToGitWhereGitWritesOtherBytes(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	tr.git("checkout", "-q", "--detach")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := map[string]Workspace{}
	for _, id := range []string{"a", "b", "c"} {
		ws[id] = prepareMain(t, m, r, id)
		writeFile(t, ws[id].Path, id+".txt", strings.ToUpper(id)+"\n")
	}
	require.True(t, land(t, m, r, ws["a"]).FastForward)

	tr.git("config", "i18n.commitEncoding", "ISO-8859-1")
	lb := land(t, m, r, ws["b"])
	require.False(t, lb.FastForward)
	require.Contains(t, tr.git("cat-file", "commit", lb.Commit), "\nencoding ISO-8859-1\n")

	tr.git("config", "--unset", "i18n.commitEncoding")
	later := time.Now().Add(2 * time.Second) // the config file's mtime must change visibly
	require.NoError(t, os.Chtimes(filepath.Join(r.commonDir, "config"), later, later))
	lc := land(t, m, r, ws["c"])
	require.False(t, lc.FastForward)
	require.NotContains(t, tr.git("cat-file", "commit", lc.Commit), "\nencoding ")
	fsckClean(t, tr.dir)

	require.Contains(t, verbatimCommit(Signature{Name: "Bot.", Email: "bot@x"}, "m"), "cleaned up")
	require.Contains(t, verbatimCommit(Signature{Name: "Bot", Email: " bot@x"}, "m"), "cleaned up")
	require.Contains(t, verbatimCommit(Signature{Name: "Bot", Email: "bot@x"}, "\xff"), "not UTF-8")
	require.Empty(t, verbatimCommit(Signature{Name: "Ann O. Nymous", Email: "a.n@x.y"}, "m"))
}

// An author name git would clean up ("Bot." loses its dot) lands through commit-tree, with
// git's own clean-up.
func TestLand_IdentityGitCleansUpGoesThroughCommitTree(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	tr.git("checkout", "-q", "--detach")
	m := newTestManager(t, func(c *Config) { c.Author = Signature{Name: "Bot.", Email: "bot@example.invalid"} })
	r := openRepo(t, m, tr.dir)
	wa, wb := prepareMain(t, m, r, "a"), prepareMain(t, m, r, "b")
	writeFile(t, wa.Path, "a.txt", "A\n")
	writeFile(t, wb.Path, "b.txt", "B\n")
	land(t, m, r, wa)
	lb := land(t, m, r, wb)
	require.False(t, lb.FastForward)
	require.Contains(t, tr.git("cat-file", "commit", lb.Commit), "\nauthor Bot <bot@example.invalid> ")
}

func lineStarting(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// gitCmd is a git command in dir with the test environment but no identity of its own.
func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	return cmd
}

// prepareMain prepares attempt 1 of a mission onto branch main (the repository's HEAD is
// detached in these tests, so the landing moves the branch with update-ref).
func prepareMain(t *testing.T, m *Manager, r *Repo, mission string) Workspace {
	t.Helper()
	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: mission, Attempt: 1, TargetBranch: "main"})
	require.NoError(t, err)
	return ws
}
