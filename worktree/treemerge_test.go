package worktree

import (
	"fmt"
	"math/rand"
	"os"
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

// commitModel replaces the checkout's files by the model's and commits them.
func commitModel(t *testing.T, tr *testRepo, tm treeModel, msg string) string {
	t.Helper()
	ents, err := os.ReadDir(tr.dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.Name() != ".git" {
			require.NoError(t, os.RemoveAll(filepath.Join(tr.dir, e.Name())))
		}
	}
	for p, f := range tm {
		full := filepath.Join(tr.dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		switch {
		case f.link:
			require.NoError(t, os.Symlink(f.content, full))
		case f.exec:
			require.NoError(t, os.WriteFile(full, []byte(f.content), 0o755))
		default:
			require.NoError(t, os.WriteFile(full, []byte(f.content), 0o644))
		}
	}
	tr.git("add", "-A")
	tr.git("commit", "-q", "--allow-empty", "-m", msg)
	return tr.git("rev-parse", "HEAD")
}

// The tree walk answers only merges that git's merge-ort answers the same way, tree id for
// tree id: random histories of two sides over one base (modifications, additions, deletions,
// mode changes, symbolic links, file and directory renames, on paths chosen from a small set
// so that the sides often touch the same paths and directories), each merged by both.
func TestTrivialMergeTree_EqualsGitMergeTree(t *testing.T) {
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	rng := rand.New(rand.NewSource(13))
	const cases = 80
	answered, declined := 0, 0
	for i := range cases {
		base := treeModel{}
		for range 2 + rng.Intn(5) {
			p := genDirs[rng.Intn(len(genDirs))] + genNames[rng.Intn(len(genNames))]
			if !base.clashes(p) {
				base[p] = fileModel{content: fmt.Sprintf("base %d %s\n", i, p)}
			}
		}
		tr.git("checkout", "-q", "--orphan", fmt.Sprintf("case%d", i))
		baseC := commitModel(t, tr, base, "base")
		ours, theirs := base.clone(), base.clone()
		ours.mutate(rng, fmt.Sprintf("o%d", i))
		theirs.mutate(rng, fmt.Sprintf("t%d", i))
		oursC := commitModel(t, tr, ours, "ours")
		tr.git("checkout", "-q", "--detach", baseC)
		theirsC := commitModel(t, tr, theirs, "theirs")

		tree, ok, err := r.trivialMergeTree(plumbing.NewHash(baseC), plumbing.NewHash(oursC), plumbing.NewHash(theirsC))
		require.NoError(t, err, "case %d", i)
		out, gitErr := gitTry(tr.dir, "merge-tree", "--write-tree", oursC, theirsC)
		if !ok {
			declined++
			continue
		}
		answered++
		require.NoError(t, gitErr, "case %d: the walk merged what git reports as a conflict:\nbase %v\nours %v\ntheirs %v\n%s",
			i, base, ours, theirs, out)
		require.Equal(t, strings.TrimSpace(out), tree.String(), "case %d: base %v\nours %v\ntheirs %v", i, base, ours, theirs)
	}
	t.Logf("%d of %d merges answered by the walk, %d left to git", answered, cases, declined)
	require.Greater(t, answered, cases/4, "the walk answers the common shapes")
	require.Greater(t, declined, cases/10, "the generator makes shapes the walk must leave to git")
	fsckClean(t, tr.dir)
}

// The shapes where a naive union of both sides' changes differs from git's merge are left to
// git: a file changed on both sides (even identically), a rename on one side of a file the
// other changed, the same file renamed to two names, a directory renamed on one side while
// the other adds to it, a file on one side where the other has a directory, and a merge that
// would empty a directory.
func TestTrivialMergeTree_LeavesOverlapsToGit(t *testing.T) {
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
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	for i, s := range shapes {
		tr.git("checkout", "-q", "--orphan", fmt.Sprintf("shape%d", i))
		baseC := commitModel(t, tr, s.base, "base")
		oursC := commitModel(t, tr, s.ours, "ours")
		tr.git("checkout", "-q", "--detach", baseC)
		theirsC := commitModel(t, tr, s.theirs, "theirs")
		_, ok, err := r.trivialMergeTree(plumbing.NewHash(baseC), plumbing.NewHash(oursC), plumbing.NewHash(theirsC))
		require.NoError(t, err, s.name)
		require.False(t, ok, "%s: left to git", s.name)
	}
	// The contrast: disjoint changes in one directory and in new ones are answered.
	tr.git("checkout", "-q", "--orphan", "disjoint")
	base := treeModel{"d/a": {content: "a\n"}, "d/b": {content: "b\n"}}
	baseC := commitModel(t, tr, base, "base")
	oursC := commitModel(t, tr, treeModel{"d/a": {content: "A\n"}, "d/b": {content: "b\n"}, "n/x": {content: "x\n"}}, "ours")
	tr.git("checkout", "-q", "--detach", baseC)
	theirsC := commitModel(t, tr, treeModel{"d/a": {content: "a\n"}, "d/b": {content: "B\n", exec: true}, "n/y": {content: "y\n"}}, "theirs")
	tree, ok, err := r.trivialMergeTree(plumbing.NewHash(baseC), plumbing.NewHash(oursC), plumbing.NewHash(theirsC))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, tr.git("merge-tree", "--write-tree", oursC, theirsC), tree.String())
}

// In a repository with replace refs git's merge reads other objects than go-git would: every
// merge there is left to git.
func TestTrivialMergeTree_LeavesReplaceRefsToGit(t *testing.T) {
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
