package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Bug case B68: an agent's symbolic link out of the repository (`ln -s <repo>/node_modules
// node_modules`) must never be followed by a removal, never be committed by our commit of
// leftover work, never land; a workspace directory replaced by a link is not the workspace.

// linkRepo is a repository whose checkout holds an untracked node_modules/sentinel, as a
// person's npm install leaves it.
func linkRepo(t *testing.T) (*testRepo, string) {
	t.Helper()
	tr := newTestRepo(t, map[string]string{"README.md": "hello\n"})
	tr.write("node_modules/sentinel", "the person's install\n")
	return tr, filepath.Join(tr.dir, "node_modules")
}

// treeMode returns the mode of path at rev ("" when absent).
func treeMode(t *testing.T, dir, rev, path string) string {
	t.Helper()
	out, err := gitTry(dir, "ls-tree", rev, "--", path)
	require.NoError(t, err, out)
	if f := strings.Fields(out); len(f) > 0 {
		return f[0]
	}
	return ""
}

func TestB68_LeftoverLinkOutOfTheRepositoryIsNeverCommittedAndCleanupRemovesOnlyTheLink(t *testing.T) {
	t.Parallel()
	tr, nodeModules := linkRepo(t)
	clock := &fakeClock{now: time.Now()}
	m := newTestManager(t, func(c *Config) { c.Now = clock.Now })
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	require.NoError(t, os.Symlink(nodeModules, filepath.Join(ws.Path, "node_modules")))
	require.NoError(t, os.Symlink("README.md", filepath.Join(ws.Path, "readme-link"))) // inside: ordinary work
	writeFile(t, ws.Path, "a.txt", "a\n")

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"a.txt", "readme-link"}, l.ChangedFiles)
	require.Equal(t, "", treeMode(t, tr.dir, "main", "node_modules"), "the link out of the repository was not committed")
	require.Equal(t, "120000", treeMode(t, tr.dir, "main", "readme-link"), "a link inside the repository is work like any file")
	require.Equal(t, "?? node_modules", gitIn(t, ws.Path, "status", "--porcelain"), "left in the workspace, uncommitted")

	clock.Add(48 * time.Hour)
	rep, err := m.Cleanup(ctxT(t), CleanupRequest{Repo: r, Keep: func(string, int) bool { return false }})
	require.NoError(t, err)
	require.Equal(t, []string{"m"}, missions(rep.Removed), "the link is not work: the workspace is removed, kept: %+v", rep.Kept)
	_, err = os.Lstat(ws.Path)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Equal(t, "the person's install\n", readFile(t, nodeModules, "sentinel"), "removal never follows the link")
}

func TestB68_CommittedLinkOutOfTheRepositoryIsRefusedAtLanding(t *testing.T) {
	t.Parallel()
	tr, nodeModules := linkRepo(t)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	require.NoError(t, os.Symlink(nodeModules, filepath.Join(ws.Path, "node_modules")))
	require.NoError(t, os.MkdirAll(filepath.Join(ws.Path, "lib"), 0o755))
	require.NoError(t, os.Symlink("../../elsewhere", filepath.Join(ws.Path, "lib", "up"))) // relative, climbing out
	writeFile(t, ws.Path, "a.txt", "a\n")
	gitIn(t, ws.Path, "add", "-A") // the agent commits everything itself
	gitIn(t, ws.Path, "commit", "-q", "-m", "agent")
	before := tr.tip("main")

	l := land(t, m, r, ws)

	require.Equal(t, LandRefused, l.Status)
	require.Equal(t, []EscapingLink{{Path: "lib/up", Target: "../../elsewhere"}, {Path: "node_modules", Target: nodeModules}}, l.EscapingLinks)
	require.Contains(t, l.Detail, "node_modules -> "+nodeModules)
	require.Contains(t, l.Detail, "git rm --cached")
	require.Equal(t, before, tr.tip("main"), "nothing moved")
	require.Equal(t, LandRefused, land(t, m, r, ws).Status, "refused again, never landed by a retry")
	require.Equal(t, "the person's install\n", readFile(t, nodeModules, "sentinel"))
}

func TestB68_ALinkTheRepositoryAlreadyTracksLands(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	require.NoError(t, os.Symlink("/opt/tools", filepath.Join(tr.dir, "tools")))
	tr.commitAll("the person tracks a link to /opt/tools")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)

	edit := prepare(t, m, r, "edit", 1)
	writeFile(t, edit.Path, "a.txt", "a\n")
	require.Equal(t, LandLanded, land(t, m, r, edit).Status, "an attempt that leaves the tracked link alone lands")

	// The attempt adds a link the target gained meanwhile, identically: the repository tracks it.
	same := prepare(t, m, r, "same", 1)
	require.NoError(t, os.Symlink("/opt/shared", filepath.Join(same.Path, "shared")))
	gitIn(t, same.Path, "add", "shared")
	gitIn(t, same.Path, "commit", "-q", "-m", "agent adds shared")
	require.NoError(t, os.Symlink("/opt/shared", filepath.Join(tr.dir, "shared")))
	tr.write("b.txt", "b\n")
	tr.commitAll("the person adds the same link")
	require.Equal(t, LandLanded, land(t, m, r, same).Status)

	repoint := prepare(t, m, r, "repoint", 1)
	require.NoError(t, os.Remove(filepath.Join(repoint.Path, "tools")))
	require.NoError(t, os.Symlink("/home/someone/tools", filepath.Join(repoint.Path, "tools")))
	gitIn(t, repoint.Path, "commit", "-q", "-a", "-m", "agent re-points tools")
	l := land(t, m, r, repoint)
	require.Equal(t, LandRefused, l.Status, "a tracked link pointed elsewhere is a new link out")
	require.Equal(t, []EscapingLink{{Path: "tools", Target: "/home/someone/tools"}}, l.EscapingLinks)
}

func TestB68_BatchLandsTheOthersAndRefusesTheLink(t *testing.T) {
	t.Parallel()
	tr, nodeModules := linkRepo(t)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	bad := prepare(t, m, r, "bad", 1)
	require.NoError(t, os.Symlink(nodeModules, filepath.Join(bad.Path, "node_modules")))
	gitIn(t, bad.Path, "add", "node_modules")
	gitIn(t, bad.Path, "commit", "-q", "-m", "agent")
	good := prepare(t, m, r, "good", 1)
	writeFile(t, good.Path, "g.txt", "g\n")

	out, err := m.LandBatch(ctxT(t), []LandRequest{
		{Repo: r, MissionID: "bad", Attempt: 1, Workspace: bad},
		{Repo: r, MissionID: "good", Attempt: 1, Workspace: good},
	})

	require.NoError(t, err)
	require.NoError(t, out[0].Err)
	require.NoError(t, out[1].Err)
	require.Equal(t, LandRefused, out[0].Landing.Status)
	require.Equal(t, LandLanded, out[1].Landing.Status)
	require.Equal(t, "", treeMode(t, tr.dir, "main", "node_modules"))
	require.Equal(t, "100644", treeMode(t, tr.dir, "main", "g.txt"))
}

func TestB68_WorkspaceReplacedByALinkToALiveOneIsLeftAlone(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	clock := &fakeClock{now: time.Now()}
	m := newTestManager(t, func(c *Config) { c.Now = clock.Now })
	r := openRepo(t, m, tr.dir)
	live := prepare(t, m, r, "live", 1)
	writeFile(t, live.Path, "work.txt", "the live agent's work\n")
	cancelled := prepare(t, m, r, "cancelled", 1)
	require.NoError(t, os.RemoveAll(cancelled.Path))
	require.NoError(t, os.Symlink(live.Path, cancelled.Path))
	// A whole mission directory replaced by a link to the live mission's directory.
	other := prepare(t, m, r, "other", 1)
	otherDir := filepath.Dir(other.Path)
	require.NoError(t, os.RemoveAll(otherDir))
	require.NoError(t, os.Symlink(filepath.Dir(live.Path), otherDir))
	clock.Add(48 * time.Hour)
	keep := func(mission string, _ int) bool { return mission == "live" }

	rep, err := m.Cleanup(ctxT(t), CleanupRequest{Repo: r, Keep: keep})

	require.NoError(t, err)
	require.Empty(t, rep.Removed)
	got := map[string]CleanupEntry{}
	for _, e := range rep.Kept {
		got[e.MissionID] = e
	}
	require.Equal(t, "keep", got["live"].Reason)
	require.Equal(t, "symlink", got["cancelled"].Reason, "not dirty: it is not the workspace any more")
	require.Contains(t, got["cancelled"].Detail, live.Path)
	require.Equal(t, "symlink", got["other"].Reason)
	require.Equal(t, "the live agent's work\n", readFile(t, live.Path, "work.txt"))
	require.Contains(t, tr.git("worktree", "list", "--porcelain"), "worktree "+live.Path)
	target, err := os.Readlink(cancelled.Path)
	require.NoError(t, err)
	require.Equal(t, live.Path, target, "the link itself is left for a person")

	err = m.Remove(ctxT(t), cancelled, RemoveOptions{Force: true, DeleteBranch: true})
	require.ErrorIs(t, err, ErrWorkspaceSymlink)
	require.Contains(t, err.Error(), live.Path)
	require.Equal(t, "the live agent's work\n", readFile(t, live.Path, "work.txt"))
	require.NotEmpty(t, tr.git("branch", "--list", cancelled.Branch), "nothing of it was removed")
}

func TestLinkEscapes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rel, target string
		out         bool
	}{
		{"node_modules", "/home/p/repo/node_modules", true},
		{"a/b", "../c", false},
		{"a/b", "../../c", true},
		{"a/b", "../a/c", false},   // up and down again, inside
		{"a/b", "../../a/c", true}, // above the top level, into its parent's a/
		{"x", "..", true},
		{"x", ".", false},
		{"x", "sub/../../y", true},
		{"x", `C:\Users\p`, true},
		{"x", "c:/data", true},
		{"x", `\\server\share`, true},
		{"x", "", false},
		{"docs/x", "README.md", false},
	} {
		require.Equal(t, c.out, linkEscapes(c.rel, c.target), "%s -> %s", c.rel, c.target)
	}
}
