package worktree

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Bug case B67: two tracked paths that differ only by case are one file on APFS or NTFS. This
// machine kind has no case-folding file system (no ext4 casefold, no vfat), so the tests set
// core.ignorecase=true, as `git clone` does on such a file system, and make the collapse
// themselves: docs/readme.md becomes a hard link to docs/ReadMe.md, one file under both names,
// which is what a case-insensitive checkout of the two holds (docs/workspaces.md says what
// only a macOS or Windows checkout would show).

// caseRepo tracks docs/ReadMe.md and docs/readme.md (committed while git told them apart)
// and then sets core.ignorecase.
func caseRepo(t *testing.T) *testRepo {
	t.Helper()
	tr := newTestRepo(t, map[string]string{"docs/ReadMe.md": "upper\n", "docs/readme.md": "lower\n", "README.md": "hello\n"})
	tr.git("config", "core.ignorecase", "true")
	return tr
}

// porcelain is `git status --porcelain` in dir, untrimmed (its first column matters).
func porcelain(t *testing.T, dir string) string {
	t.Helper()
	out, err := gitTry(dir, "status", "--porcelain")
	require.NoError(t, err, out)
	return out
}

// collapse makes docs/readme.md the same file as docs/ReadMe.md in dir, as a case-insensitive
// file system holds them.
func collapse(t *testing.T, dir string) {
	t.Helper()
	lower := filepath.Join(dir, "docs", "readme.md")
	require.NoError(t, os.Remove(lower))
	require.NoError(t, os.Link(filepath.Join(dir, "docs", "ReadMe.md"), lower))
}

func TestB67_CaseOnlyCollisionIsNotedAndNeverCommittedForTheAgent(t *testing.T) {
	t.Parallel()
	tr := caseRepo(t)
	blobs := map[string]string{}
	for _, p := range []string{"docs/ReadMe.md", "docs/readme.md"} {
		blobs[p] = tr.git("rev-parse", "main:"+p)
	}
	clock := &fakeClock{now: time.Now()}
	m := newTestManager(t, func(c *Config) { c.Now = clock.Now })
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	require.Len(t, ws.Notes, 1)
	require.Contains(t, ws.Notes[0], "docs/ReadMe.md and docs/readme.md")
	require.Contains(t, ws.Notes[0], "never committed for you")
	again, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1})
	require.NoError(t, err)
	require.Equal(t, ws.Notes, again.Notes, "the note is in the workspace's record")

	collapse(t, ws.Path)
	writeFile(t, ws.Path, "a.txt", "a\n") // the agent's own work, left uncommitted
	require.Equal(t, " M docs/readme.md\n?? a.txt\n", porcelain(t, ws.Path))

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"a.txt"}, l.ChangedFiles, "the commit of leftover work holds only the agent's change")
	for p, blob := range blobs {
		require.Equal(t, blob, tr.git("rev-parse", "main:"+p), "%s unchanged on main", p)
	}
	require.Equal(t, " M docs/readme.md\n", porcelain(t, ws.Path), "left in the workspace, unstaged")

	clock.Add(48 * time.Hour)
	rep, err := m.Cleanup(ctxT(t), CleanupRequest{Repo: r, Keep: func(string, int) bool { return false }})
	require.NoError(t, err)
	require.Empty(t, rep.Removed)
	require.Len(t, rep.Kept, 1)
	require.Equal(t, "case_collision", rep.Kept[0].Reason, "kept, and why: not plain dirty")
	require.Contains(t, rep.Kept[0].Detail, "docs/ReadMe.md and docs/readme.md")
	err = m.Remove(ctxT(t), ws, RemoveOptions{})
	require.ErrorIs(t, err, ErrWorkspaceDirty)
	require.Contains(t, err.Error(), "differ only by case")

	writeFile(t, ws.Path, "b.txt", "b\n")
	rep, err = m.Cleanup(ctxT(t), CleanupRequest{Repo: r, Keep: func(string, int) bool { return false }})
	require.NoError(t, err)
	require.Equal(t, "dirty", rep.Kept[0].Reason, "other uncommitted work makes it plain dirty")
}

func TestB67_TheAgentsOwnCommitOfACollidingPathLands(t *testing.T) {
	t.Parallel()
	tr := caseRepo(t)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "docs/readme.md", "lower, edited by the agent\n")
	gitIn(t, ws.Path, "commit", "-q", "-am", "agent edits docs/readme.md on purpose")

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"docs/readme.md"}, l.ChangedFiles)
	require.Equal(t, "lower, edited by the agent\n", tr.git("show", "main:docs/readme.md")+"\n")
	require.Equal(t, "upper", tr.git("show", "main:docs/ReadMe.md"))
}

func TestB67_WithoutIgnoreCaseNothingIsNoted(t *testing.T) {
	t.Parallel()
	tr := caseRepo(t)
	tr.git("config", "core.ignorecase", "false") // a case-sensitive file system keeps the two apart
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	require.Empty(t, ws.Notes)
	writeFile(t, ws.Path, "docs/readme.md", "lower, edited\n")
	writeFile(t, ws.Path, "a.txt", "a\n")

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"a.txt", "docs/readme.md"}, l.ChangedFiles, "two files like any others: both committed")
}

func TestFoldGroups(t *testing.T) {
	t.Parallel()
	require.Equal(t, [][]string{{"README", "ReadMe", "readme"}}, foldGroups([]string{"readme", "x", "ReadMe", "README", "y/z"}))
	require.Equal(t, [][]string{{"Docs/a.md", "docs/A.md"}}, foldGroups([]string{"docs/A.md", "Docs/a.md", "docs/b.md"}))
	require.Equal(t, [][]string{{"docs/Äpfel", "docs/äpfel"}}, foldGroups([]string{"docs/äpfel", "docs/Äpfel"}), "Unicode case folding, not ASCII only")
	require.Empty(t, foldGroups([]string{"a", "a", "b"}), "an unmerged path listed per stage is one path")
}
