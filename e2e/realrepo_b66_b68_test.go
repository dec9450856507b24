package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// newShapeRepo makes a repository at root/repo on main with files committed.
func newShapeRepo(t *testing.T, root string, files map[string]string) string {
	t.Helper()
	repo := filepath.Join(root, "repo")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	gitRun(t, repo, "init", "-q", "-b", "main")
	for name, body := range files {
		p := filepath.Join(repo, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "-m", "initial")
	return repo
}

// entry finds a cleanup report's entry for a mission ("" when none).
func entry(entries []worktree.CleanupEntry, mission string) (worktree.CleanupEntry, bool) {
	for _, e := range entries {
		if e.MissionID == mission {
			return e, true
		}
	}
	return worktree.CleanupEntry{}, false
}

// TestRealRepo_SymlinkedNodeModules is bug case B68 with the built binary: the person's
// checkout has an untracked node_modules/sentinel. Mission "leftover" writes and commits
// a.txt, then runs `ln -s $REPO/node_modules node_modules` and leaves the link uncommitted;
// mission "committed" commits such a link with b.txt; "live" and "cancelled" write a file and
// wait. "cancelled" is cancelled and its workspace directory replaced by a link to live's.
// Then `mcp-scheduler cleanup --older-than 1s`: the sentinel survives, no mode-120000 entry
// lands on main (a.txt does; the committed link is refused with its reason for the Main
// Agent), the leftover workspace is removed without following its link, and the link
// standing for the cancelled workspace is reported as such with the live workspace untouched.
func TestRealRepo_SymlinkedNodeModules(t *testing.T) {
	root := privateTempDir(t)
	repo := newShapeRepo(t, root, map[string]string{"README.md": "hello\n"})
	nodeModules := filepath.Join(repo, "node_modules")
	require.NoError(t, os.MkdirAll(nodeModules, 0o755))
	sentinel := filepath.Join(nodeModules, "sentinel")
	require.NoError(t, os.WriteFile(sentinel, []byte("the person's install\n"), 0o644))
	s := startShapeServer(t, root, repo, nil)

	link := "@symlink node_modules " + nodeModules
	m := func(key, brief string, area ...string) map[string]any {
		return map[string]any{"key": key, "title": key, "brief": brief, "write_area": area}
	}
	ids := s.dispatch("node_modules links", []map[string]any{
		m("leftover", "@write a.txt a\n@commit a\n"+link+"\n@done linked, not committed", "a.txt", "node_modules"),
		m("committed", link+"\n@write b.txt b\n@commit b and the link\n@done", "b.txt", "node_modules"),
		m("live", "@write live.txt the live agent's work\n@hang", "live.txt"),
		m("cancelled", "@write c.txt c\n@hang", "c.txt"),
	})

	left := s.waitMission(ids["leftover"], "the leftover mission to land", func(m shapeView) bool { return m.Mission.Landing == "landed" })
	require.Equal(t, []string{"a.txt"}, left.Landings[len(left.Landings)-1].ChangedFiles)
	refused := s.waitMission(ids["committed"], "the committed link's landing to be refused", func(m shapeView) bool {
		return m.Mission.Landing == "conflicted"
	})
	require.Equal(t, "refused", refused.Landings[0].Status)
	require.Contains(t, refused.Landings[0].Detail, "node_modules -> "+nodeModules)
	require.NotEmpty(t, refused.WhyNotRunning)
	require.Equal(t, "landing_conflicted", refused.WhyNotRunning[0].Code)
	require.Contains(t, refused.WhyNotRunning[0].Message, "symbolic links that point outside the repository")
	escs := s.escalations(ids["committed"])
	require.Len(t, escs, 1, "the Main Agent is told why")
	require.Equal(t, "symlink", escs[0].Kind)
	require.Equal(t, "main_agent", escs[0].Route)
	require.Contains(t, escs[0].Reason, "node_modules -> "+nodeModules)

	liveWS := s.waitMission(ids["live"], "the live agent to write its file", func(m shapeView) bool {
		if len(m.Workspaces) == 0 {
			return false
		}
		_, err := os.Stat(filepath.Join(m.workspace(t), "live.txt"))
		return err == nil
	}).workspace(t)
	cancelledWS := s.waitMission(ids["cancelled"], "the cancelled agent to write its file", func(m shapeView) bool {
		if len(m.Workspaces) == 0 {
			return false
		}
		_, err := os.Stat(filepath.Join(m.workspace(t), "c.txt"))
		return err == nil
	}).workspace(t)
	callTool(t, s.ctx, s.c, "cancel_mission", map[string]any{"mission_id": ids["cancelled"], "reason": "B68 variant"})
	s.waitMission(ids["cancelled"], "the cancelled mission to stop", func(m shapeView) bool { return m.Mission.State == "cancelled" })
	require.NoError(t, os.RemoveAll(cancelledWS))
	require.NoError(t, os.Symlink(liveWS, cancelledWS))

	rep := s.cleanupUntil("cleanup to remove the leftover mission's workspace", func(r scheduler.CleanupReport) bool {
		_, ok := entry(r.Report.Removed, ids["leftover"])
		return ok
	})

	t.Logf("cleanup: removed %+v; kept %+v", rep.Report.Removed, rep.Report.Kept)
	body, err := os.ReadFile(sentinel)
	require.NoError(t, err, "the person's node_modules survived")
	require.Equal(t, "the person's install\n", string(body))
	_, err = os.Lstat(left.workspace(t))
	require.ErrorIs(t, err, os.ErrNotExist, "the leftover workspace (with its link) is gone")
	for _, line := range strings.Split(gitRun(t, repo, "ls-tree", "-r", "main"), "\n") {
		require.False(t, strings.HasPrefix(line, "120000"), "no link landed on main: %s", line)
	}
	_, ok := showFile(t, repo, "main", "a.txt")
	require.True(t, ok)
	_, ok = showFile(t, repo, "main", "b.txt")
	require.False(t, ok, "the refused landing moved nothing")

	c, ok := entry(rep.Report.Kept, ids["cancelled"])
	require.True(t, ok, "the cancelled workspace is reported")
	require.Equal(t, "symlink", c.Reason, "a link, not a dirty workspace")
	require.Contains(t, c.Detail, liveWS)
	target, err := os.Readlink(cancelledWS)
	require.NoError(t, err)
	require.Equal(t, liveWS, target, "the link is left for a person")
	body, err = os.ReadFile(filepath.Join(liveWS, "live.txt"))
	require.NoError(t, err, "the live workspace is untouched")
	require.Equal(t, "the live agent's work", string(body))
	require.Contains(t, gitRun(t, repo, "worktree", "list", "--porcelain"), "worktree "+liveWS)
	require.Equal(t, "running", s.mission(ids["live"]).Mission.State)

	callTool(t, s.ctx, s.c, "cancel_mission", map[string]any{"mission_id": ids["live"], "reason": "test done"})
	s.waitMission(ids["live"], "the live mission to stop", func(m shapeView) bool { return m.Mission.State == "cancelled" })
	s.closeServer()
}

// TestRealRepo_CaseOnlyCollision is bug case B67 with the built binary, on this machine's
// case-sensitive file system: the repository tracks docs/ReadMe.md and docs/readme.md and has
// core.ignorecase=true (what `git clone` sets on APFS or NTFS). The agent's brief names the
// collision; while the landing waits for approval the workspace is made to hold what a
// case-insensitive checkout holds (docs/readme.md a hard link to docs/ReadMe.md: one file,
// two names, one of them showing a change nobody made). The landing carries only the agent's
// a.txt, both blobs stay as they were on main, and cleanup keeps the workspace with the reason.
func TestRealRepo_CaseOnlyCollision(t *testing.T) {
	root := privateTempDir(t)
	repo := newShapeRepo(t, root, map[string]string{"docs/ReadMe.md": "upper\n", "docs/readme.md": "lower\n"})
	gitRun(t, repo, "config", "core.ignorecase", "true")
	blobs := map[string]string{}
	for _, p := range []string{"docs/ReadMe.md", "docs/readme.md"} {
		blobs[p] = gitRun(t, repo, "rev-parse", "main:"+p)
	}
	s := startShapeServer(t, root, repo, map[string]any{"landing": "approval"})
	ids := s.dispatch("case collision", []map[string]any{{"key": "a", "title": "add a.txt",
		"brief": "@write a.txt a\n@commit a\n@done", "write_area": []string{"a.txt"}}})

	m := s.waitMission(ids["a"], "the mission to wait for approval", func(m shapeView) bool { return m.Mission.Landing == "approval" })
	ws := m.workspace(t)
	brief, err := os.ReadFile(filepath.Join(ws, ".mcp-scheduler", "brief.md"))
	require.NoError(t, err)
	require.Contains(t, string(brief), "## About this workspace")
	require.Contains(t, string(brief), "docs/ReadMe.md and docs/readme.md", "the agent was told")
	require.Len(t, m.Workspaces[0].Notes, 1, "and the caller")
	require.Contains(t, m.Workspaces[0].Notes[0], "docs/ReadMe.md and docs/readme.md")
	lower := filepath.Join(ws, "docs", "readme.md")
	require.NoError(t, os.Remove(lower))
	require.NoError(t, os.Link(filepath.Join(ws, "docs", "ReadMe.md"), lower))
	callTool(t, s.ctx, s.c, "approve_landing", map[string]any{"mission_id": ids["a"], "note": "B67"})

	m = s.waitMission(ids["a"], "the mission to land", func(m shapeView) bool { return m.Mission.Landing == "landed" })
	require.Equal(t, []string{"a.txt"}, m.Landings[len(m.Landings)-1].ChangedFiles)
	base := m.Workspaces[0].BaseCommit
	require.Equal(t, "a.txt", gitRun(t, repo, "diff", "--name-only", base, "main"), "the landing holds only the agent's change")
	for p, blob := range blobs {
		require.Equal(t, blob, gitRun(t, repo, "rev-parse", "main:"+p), "%s unchanged on main", p)
	}

	rep := s.cleanupUntil("cleanup to look at the landed workspace", func(r scheduler.CleanupReport) bool {
		e, ok := entry(r.Report.Kept, ids["a"])
		return ok && e.Reason != "recent"
	})
	e, _ := entry(rep.Report.Kept, ids["a"])
	require.Equal(t, "case_collision", e.Reason)
	require.Contains(t, e.Detail, "docs/ReadMe.md and docs/readme.md")
	require.DirExists(t, ws)
	s.closeServer()
}

// TestRealRepo_SparseCheckoutCone is bug case B66 with the built binary: 2,000 files under
// big/, one under src/, and the person's checkout is `git sparse-checkout set --cone src`
// (extensions.worktreeConfig on). The mission's workspace holds the cone only; the landing
// changes only src/x.go, big/** stays on main, the person's cone and `git status` are as they
// were, and cleanup removes the workspace (skip-worktree entries are not uncommitted work).
// The setup time (preparing the workspace) is printed, never asserted.
func TestRealRepo_SparseCheckoutCone(t *testing.T) {
	root := privateTempDir(t)
	files := map[string]string{"src/x.go": "package src\n"}
	for i := range 2000 {
		files[fmt.Sprintf("big/d%02d/f%04d.txt", i/100, i)] = fmt.Sprintf("file %d\n", i)
	}
	repo := newShapeRepo(t, root, files)
	gitRun(t, repo, "sparse-checkout", "set", "--cone", "src")
	sparseBefore := gitRun(t, repo, "sparse-checkout", "list")
	statusBefore := gitRun(t, repo, "status", "--porcelain", "--branch")
	s := startShapeServer(t, root, repo, nil)
	ids := s.dispatch("sparse", []map[string]any{{"key": "x", "title": "change src/x.go", "write_area": []string{"src/**"},
		"brief": "@write src/x.go \"package src\\n\\n// X is new.\\nconst X = 1\\n\"\n@commit src: X\n@done"}})

	m := s.waitMission(ids["x"], "the mission to land", func(m shapeView) bool { return m.Mission.Landing == "landed" })
	s.closeServer()

	ws := m.workspace(t)
	var checkedOut []string
	require.NoError(t, filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".mcp-scheduler" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() != ".git" {
			rel, _ := filepath.Rel(ws, p)
			checkedOut = append(checkedOut, rel)
		}
		return nil
	}))
	require.Equal(t, []string{"src/x.go"}, checkedOut, "the workspace held the cone only")
	rec := s.runRecord(ids["x"])
	t.Logf("B66 setup: the workspace of a 2,001-file repository with the cone src/ was prepared in %s (%d file checked out)",
		time.Duration(rec.PrepareMS)*time.Millisecond, len(checkedOut))

	require.Equal(t, []string{"src/x.go"}, m.Landings[len(m.Landings)-1].ChangedFiles)
	require.Equal(t, "src/x.go", gitRun(t, repo, "diff", "--name-only", m.Workspaces[0].BaseCommit, "main"))
	require.Len(t, strings.Split(gitRun(t, repo, "ls-tree", "-r", "--name-only", "main", "big"), "\n"), 2000, "big/** is on main")
	require.Equal(t, sparseBefore, gitRun(t, repo, "sparse-checkout", "list"), "the person's cone is unchanged")
	require.Equal(t, statusBefore, gitRun(t, repo, "status", "--porcelain", "--branch"), "the person's git status is unchanged")
	require.NoDirExists(t, filepath.Join(repo, "big"))
	body, ok := showFile(t, repo, "main", "src/x.go")
	require.True(t, ok)
	require.Contains(t, body, "const X = 1")

	rep := s.cleanupUntil("cleanup to remove the landed workspace", func(r scheduler.CleanupReport) bool {
		return slices.ContainsFunc(r.Report.Removed, func(e worktree.CleanupEntry) bool { return e.MissionID == ids["x"] })
	})
	_, kept := entry(rep.Report.Kept, ids["x"])
	require.False(t, kept)
	require.NoDirExists(t, ws)
}
