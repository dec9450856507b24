package worktree

import (
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
)

// fileModel is one file of a generated tree: its content, and whether it is executable or a
// symbolic link (content is then the link's target).
type fileModel struct {
	content string
	exec    bool
	link    bool
}

// treeModel is a generated tree, path → file.
type treeModel map[string]fileModel

func (tm treeModel) clone() treeModel {
	out := treeModel{}
	for k, v := range tm {
		out[k] = v
	}
	return out
}

// clashes reports whether adding path p would put a file where a directory is or the other
// way round.
func (tm treeModel) clashes(p string) bool {
	for q := range tm {
		if q == p || strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}

func (tm treeModel) paths() []string {
	var ps []string
	for p := range tm {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

var (
	genDirs  = []string{"", "a/", "a/b/", "c/", "d/e/"}
	genNames = []string{"f1", "f2", "f3", "a", "e"}
)

// mutate applies 1–3 random operations: modify, add, delete, chmod, rename a file, rename a
// directory, add a symbolic link.
func (tm treeModel) mutate(rng *rand.Rand, tag string) {
	for n := 1 + rng.Intn(3); n > 0; n-- {
		ps := tm.paths()
		pick := func() string { return ps[rng.Intn(len(ps))] }
		newPath := func() string {
			for range 20 {
				p := genDirs[rng.Intn(len(genDirs))] + genNames[rng.Intn(len(genNames))]
				if !tm.clashes(p) {
					return p
				}
			}
			return ""
		}
		switch op := rng.Intn(7); {
		case op == 0 && len(ps) > 0:
			p := pick()
			f := tm[p]
			f.content += tag + "\n"
			tm[p] = f
		case op == 1:
			if p := newPath(); p != "" {
				tm[p] = fileModel{content: "new " + tag + " " + p + "\n"}
			}
		case op == 2 && len(ps) > 1:
			delete(tm, pick())
		case op == 3 && len(ps) > 0:
			if p := pick(); !tm[p].link {
				f := tm[p]
				f.exec = !f.exec
				tm[p] = f
			}
		case op == 4 && len(ps) > 0:
			p := pick()
			f := tm[p]
			delete(tm, p)
			if q := newPath(); q != "" {
				tm[q] = f
			} else {
				tm[p] = f
			}
		case op == 5 && len(ps) > 0:
			dir := filepath.Dir(pick())
			if dir == "." {
				continue
			}
			to := "moved-" + tag
			for _, p := range ps {
				if strings.HasPrefix(p, dir+"/") {
					f := tm[p]
					delete(tm, p)
					tm[to+"/"+strings.TrimPrefix(p, dir+"/")] = f
				}
			}
		case op == 6:
			if p := newPath(); p != "" {
				tm[p] = fileModel{content: "target-" + tag, link: true}
			}
		}
	}
}

// mergeCase is one generated merge: a base and the two sides made from it.
type mergeCase struct {
	base, ours, theirs treeModel
}

// commitCases writes every case's three commits (ours and theirs with base as their parent)
// with one `git fast-import` and returns their ids, [base, ours, theirs] per case.
func commitCases(t *testing.T, dir string, cases []mergeCase) [][3]string {
	t.Helper()
	var in strings.Builder
	mark := 0
	commit := func(tm treeModel, parent int) int {
		mark++
		fmt.Fprintf(&in, "commit refs/heads/gen%d\nmark :%d\ncommitter Person <person@example.invalid> 1700000000 +0000\ndata 4\ngen\n", mark, mark)
		if parent > 0 {
			fmt.Fprintf(&in, "from :%d\n", parent)
		}
		in.WriteString("deleteall\n")
		for _, p := range tm.paths() {
			f, mode := tm[p], "100644"
			switch {
			case f.link:
				mode = "120000"
			case f.exec:
				mode = "100755"
			}
			fmt.Fprintf(&in, "M %s inline %s\ndata %d\n%s\n", mode, p, len(f.content), f.content)
		}
		return mark
	}
	marks := make([][3]int, len(cases))
	for i, c := range cases {
		b := commit(c.base, 0)
		marks[i] = [3]int{b, commit(c.ours, b), commit(c.theirs, b)}
	}
	file := filepath.Join(t.TempDir(), "marks")
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet", "--export-marks="+file)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "fast-import: %s", out)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	ids := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		m, id, _ := strings.Cut(line, " ")
		ids[m] = id
	}
	got := make([][3]string, len(cases))
	for i, ms := range marks {
		for j, m := range ms {
			got[i][j] = ids[fmt.Sprintf(":%d", m)]
			require.NotEmpty(t, got[i][j], "case %d commit %d", i, j)
		}
	}
	return got
}

// The tree walk answers only merges that git's merge-ort answers the same way, tree id for
// tree id: random histories of two sides over one base (modifications, additions, deletions,
// mode changes, symbolic links, file and directory renames, on paths chosen from a small set
// so that the sides often touch the same paths and directories), each merged by both.
func TestTrivialMergeTree_EqualsGitMergeTree(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	rng := rand.New(rand.NewSource(13))
	const n = 120
	cases := make([]mergeCase, n)
	for i := range cases {
		base := treeModel{}
		for range 2 + rng.Intn(5) {
			p := genDirs[rng.Intn(len(genDirs))] + genNames[rng.Intn(len(genNames))]
			if !base.clashes(p) {
				base[p] = fileModel{content: fmt.Sprintf("base %d %s\n", i, p)}
			}
		}
		ours, theirs := base.clone(), base.clone()
		ours.mutate(rng, fmt.Sprintf("o%d", i))
		theirs.mutate(rng, fmt.Sprintf("t%d", i))
		cases[i] = mergeCase{base: base, ours: ours, theirs: theirs}
	}
	answered, declined := 0, 0
	for i, ids := range commitCases(t, tr.dir, cases) {
		c := cases[i]
		tree, ok, err := r.trivialMergeTree(plumbing.NewHash(ids[0]), plumbing.NewHash(ids[1]), plumbing.NewHash(ids[2]))
		require.NoError(t, err, "case %d", i)
		if !ok {
			declined++
			continue
		}
		answered++
		out, gitErr := gitTry(tr.dir, "merge-tree", "--write-tree", ids[1], ids[2])
		require.NoError(t, gitErr, "case %d: the walk merged what git reports as a conflict:\nbase %v\nours %v\ntheirs %v\n%s",
			i, c.base, c.ours, c.theirs, out)
		require.Equal(t, strings.TrimSpace(out), tree.String(), "case %d: base %v\nours %v\ntheirs %v", i, c.base, c.ours, c.theirs)
	}
	t.Logf("%d of %d merges answered by the walk, %d left to git", answered, n, declined)
	require.Greater(t, answered, n/4, "the walk answers the common shapes")
	require.Greater(t, declined, n/10, "the generator makes shapes the walk must leave to git")
	fsckClean(t, tr.dir)
}

// The shapes where a naive union of both sides' changes differs from git's merge are left to
// git: a file changed on both sides (even identically), a rename on one side of a file the
// other changed, the same file renamed to two names, a directory renamed on one side while
// the other adds to it, a file on one side where the other has a directory, and a merge that
// would empty a directory.
func TestTrivialMergeTree_LeavesOverlapsToGit(t *testing.T) {
	t.Parallel()
	shapes := []struct {
		name               string
		base, ours, theirs treeModel
	}{
		{"both modify", treeModel{"x": {content: "1\n"}}, treeModel{"x": {content: "2\n"}}, treeModel{"x": {content: "3\n"}}},
		{"same change on both sides", treeModel{"x": {content: "1\n"}}, treeModel{"x": {content: "2\n"}}, treeModel{"x": {content: "2\n"}}},
		{"rename and modify", treeModel{"x": {content: "one\ntwo\nthree\n"}},
			treeModel{"y": {content: "one\ntwo\nthree\n"}}, treeModel{"x": {content: "one\ntwo\nthree\nfour\n"}}},
		{"rename to two names", treeModel{"x": {content: "one\ntwo\nthree\n"}},
			treeModel{"y": {content: "one\ntwo\nthree\n"}}, treeModel{"z": {content: "one\ntwo\nthree\n"}}},
		{"directory renamed, other side adds to it", treeModel{"d/a": {content: "a\n"}, "d/b": {content: "b\n"}},
			treeModel{"e/a": {content: "a\n"}, "e/b": {content: "b\n"}},
			treeModel{"d/a": {content: "a\n"}, "d/b": {content: "b\n"}, "d/c": {content: "c\n"}}},
		{"file against directory", treeModel{"k": {content: "k\n"}},
			treeModel{"k": {content: "k\n"}, "p": {content: "file\n"}}, treeModel{"k": {content: "k\n"}, "p/q": {content: "dir\n"}}},
		{"a directory emptied by both sides", treeModel{"k": {content: "k\n"}, "d/a": {content: "a\n"}, "d/b": {content: "b\n"}},
			treeModel{"k": {content: "k\n"}, "d/b": {content: "b\n"}}, treeModel{"k": {content: "k\n"}, "d/a": {content: "a\n"}}},
	}
	disjoint := mergeCase{base: treeModel{"d/a": {content: "a\n"}, "d/b": {content: "b\n"}},
		ours:   treeModel{"d/a": {content: "A\n"}, "d/b": {content: "b\n"}, "n/x": {content: "x\n"}},
		theirs: treeModel{"d/a": {content: "a\n"}, "d/b": {content: "B\n", exec: true}, "n/y": {content: "y\n"}}}
	cases := []mergeCase{disjoint}
	for _, s := range shapes {
		cases = append(cases, mergeCase{base: s.base, ours: s.ours, theirs: s.theirs})
	}
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ids := commitCases(t, tr.dir, cases)
	for i, s := range shapes {
		c := ids[i+1]
		_, ok, err := r.trivialMergeTree(plumbing.NewHash(c[0]), plumbing.NewHash(c[1]), plumbing.NewHash(c[2]))
		require.NoError(t, err, s.name)
		require.False(t, ok, "%s: left to git", s.name)
	}
	// The contrast: disjoint changes in one directory and in new ones are answered.
	tree, ok, err := r.trivialMergeTree(plumbing.NewHash(ids[0][0]), plumbing.NewHash(ids[0][1]), plumbing.NewHash(ids[0][2]))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, tr.git("merge-tree", "--write-tree", ids[0][1], ids[0][2]), tree.String())
}

// In a repository with replace refs git's merge reads other objects than go-git would: every
// merge there is left to git.
func TestTrivialMergeTree_LeavesReplaceRefsToGit(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a": "a\n", "b": "b\n"})
	base := tr.tip("main")
	tr.write("a", "A\n")
	ours := tr.commitAll("ours")
	tr.git("checkout", "-q", "--detach", base)
	tr.write("b", "B\n")
	theirs := tr.commitAll("theirs")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	_, ok, err := r.trivialMergeTree(plumbing.NewHash(base), plumbing.NewHash(ours), plumbing.NewHash(theirs))
	require.NoError(t, err)
	require.True(t, ok)
	tr.git("replace", ours, base)
	_, ok, err = r.trivialMergeTree(plumbing.NewHash(base), plumbing.NewHash(ours), plumbing.NewHash(theirs))
	require.NoError(t, err)
	require.False(t, ok)
}

// Through Land: attempts that changed different files merge without `git merge-tree`; an
// attempt that changed the same file as the target did since its base (different lines, a
// clean content merge) still goes to git, and both edits land.
func TestLand_SameFileGoesToGitMergeTreeDisjointFilesDoNot(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"s.txt": "one\ntwo\nthree\nfour\nfive\n", "x.txt": "x\n"})
	tr.git("checkout", "-q", "--detach")
	logs := &syncBuffer{}
	m := newTestManager(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	r := openRepo(t, m, tr.dir)
	a, b, c := prepareMain(t, m, r, "a"), prepareMain(t, m, r, "b"), prepareMain(t, m, r, "c")
	writeFile(t, a.Path, "s.txt", "ONE\ntwo\nthree\nfour\nfive\n")
	writeFile(t, b.Path, "s.txt", "one\ntwo\nthree\nfour\nFIVE\n")
	writeFile(t, c.Path, "x.txt", "X\n")
	require.True(t, land(t, m, r, a).FastForward)

	reset := func() {
		logs.mu.Lock()
		logs.buf.Reset()
		logs.mu.Unlock()
	}
	reset()
	lb := land(t, m, r, b)
	require.Equal(t, LandLanded, lb.Status)
	require.False(t, lb.FastForward)
	require.Contains(t, logs.String(), "args=\"merge-tree", "a file both sides changed is git's to merge")
	require.Equal(t, "ONE\ntwo\nthree\nfour\nFIVE", tr.git("show", "main:s.txt"))

	reset()
	lc := land(t, m, r, c)
	require.Equal(t, LandLanded, lc.Status)
	require.False(t, lc.FastForward)
	require.NotContains(t, logs.String(), "args=\"merge-tree", "disjoint files are merged by the tree walk")
	require.Equal(t, "ONE\ntwo\nthree\nfour\nFIVE", tr.git("show", "main:s.txt"))
	require.Equal(t, "X", tr.git("show", "main:x.txt"))
	require.Equal(t, []string{lb.NewTarget, lc.BranchTip}, parentsOf(t, tr.dir, lc.Commit), "the merge commit's parents: the target, the attempt")
	fsckClean(t, tr.dir)
}
